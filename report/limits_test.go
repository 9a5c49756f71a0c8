package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

func truncatedReport(kept int, msgLen int) *report.Report {
	st := report.Stage{Name: "validate", Status: report.Fail,
		Truncated: []diag.Truncation{{Check: "validate", Rule: "package-no-channels", Severity: diag.Error, Count: 699990}}}
	for i := range kept {
		st.Diagnostics = append(st.Diagnostics, diag.Diagnostic{Severity: diag.Error, Check: "validate", Rule: "package-no-channels",
			File: "catalog.json", Line: 1, Column: 1 + i, Message: fmt.Sprintf("package %q has no channels", strings.Repeat("p", msgLen))})
	}
	return &report.Report{Title: "catalog hostile", Stages: []report.Stage{st}}
}

// Every renderer says how many diagnostics were dropped and of which rule; none is silent about it.
func TestTruncationIsReportedInEveryFormat(t *testing.T) {
	r := truncatedReport(10, 8)
	for _, format := range report.Formats {
		var b bytes.Buffer
		if err := report.Render(&b, r, format, "catalog", "v1", false); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		out := b.String()
		var want string
		switch format {
		case "text", "github", "markdown":
			want = "699,990 more"
		case "json":
			want = `"truncated": [`
		case "sarif":
			want = `"validate/package-no-channels": 699990`
		}
		if format == "github" && !strings.Contains(out, "699990 more diagnostics are not annotated") {
			t.Errorf("github annotations: the notice must count the dropped diagnostics too:\n%s", out)
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s output does not report the truncation (%q):\n%s", format, want, out)
		}
		if format == "json" {
			var v struct {
				Stages []struct {
					Truncated []diag.Truncation `json:"truncated"`
				} `json:"stages"`
			}
			if err := json.Unmarshal(b.Bytes(), &v); err != nil || len(v.Stages) != 1 || len(v.Stages[0].Truncated) != 1 || v.Stages[0].Truncated[0].Count != 699990 {
				t.Errorf("json truncated count: %v %+v", err, v)
			}
		}
	}
}

// Even with every diagnostic kept (or huge names in messages), the text report stays under its cap and
// says how many it did not print.
func TestTextReportIsCapped(t *testing.T) {
	r := truncatedReport(20000, 200)
	var b bytes.Buffer
	if err := report.WriteText(&b, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if b.Len() > report.MaxText+4096 {
		t.Fatalf("text report is %d bytes, over the %d cap", b.Len(), report.MaxText)
	}
	if !strings.Contains(b.String(), "more not shown: the text report stops at 1048576 bytes") || !strings.HasSuffix(b.String(), "verdict: fail\n") {
		t.Fatalf("the capped report must say what it left out and still end with the verdict:\n%s", b.String()[b.Len()-600:])
	}
	if md := report.Markdown(r, 0); len(md) > report.MaxMarkdown {
		t.Fatalf("markdown is %d bytes", len(md))
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 699990: "699,990", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := report.Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
