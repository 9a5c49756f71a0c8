package report_test

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// annotation is one parsed workflow command.
type annotation struct {
	level   string
	props   map[string]string // decoded
	message string            // decoded
}

var commandLine = regexp.MustCompile(`^::(error|warning|notice) ([^:]*)::(.*)$`)

// unescape reverses the workflow-command encoding (actions/toolkit's escapeData and escapeProperty).
func unescape(s string) string {
	return strings.NewReplacer("%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

// parseCommands parses WriteGitHub's output, failing on any line that is not one well-formed command.
func parseCommands(t *testing.T, out string) []annotation {
	t.Helper()
	var as []annotation
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.ContainsRune(line, '\r') {
			t.Errorf("raw CR in %q", line)
		}
		m := commandLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("not a workflow command: %q", line)
			continue
		}
		a := annotation{level: m[1], props: map[string]string{}, message: unescape(m[3])}
		for _, p := range strings.Split(m[2], ",") {
			k, v, ok := strings.Cut(p, "=")
			if !ok {
				t.Errorf("property %q of %q has no value", p, line)
			}
			a.props[k] = unescape(v)
		}
		as = append(as, a)
	}
	return as
}

func TestGitHubEscaping(t *testing.T) {
	d := diag.Diagnostic{Severity: diag.Error, Check: "che:ck", Rule: "ru,le%", File: "cat,a:log/100%\r\n.json", Line: 4, Column: 2,
		Message: "50% done,\r\nthen: more %0A", Hint: "a, b: c"}
	r := &report.Report{Stages: []report.Stage{{Name: "validate", Status: report.Fail, Diagnostics: []diag.Diagnostic{d}}}}
	var buf bytes.Buffer
	if err := report.WriteGitHub(&buf, r, "ro:ot"); err != nil {
		t.Fatal(err)
	}
	want := "::error file=ro%3Aot/cat%2Ca%3Alog/100%25%0D%0A.json,line=4,col=2,title=che%3Ack/ru%2Cle%25::" +
		"50%25 done,%0D%0Athen: more %250A (a, b: c)\n"
	if buf.String() != want {
		t.Fatalf("got  %q\nwant %q", buf.String(), want)
	}
	as := parseCommands(t, buf.String())
	if len(as) != 1 {
		t.Fatalf("%d commands, want 1", len(as))
	}
	a := as[0]
	if a.props["file"] != "ro:ot/"+d.File || a.props["title"] != "che:ck/ru,le%" || a.props["line"] != "4" || a.props["col"] != "2" {
		t.Errorf("properties decode to %q", a.props)
	}
	if a.message != d.Message+" (a, b: c)" {
		t.Errorf("message decodes to %q", a.message)
	}
}

func TestGitHubSample(t *testing.T) {
	r := sample()
	var buf bytes.Buffer
	if err := report.WriteGitHub(&buf, r, ""); err != nil {
		t.Fatal(err)
	}
	as := parseCommands(t, buf.String())
	ds := r.Diagnostics()
	var errs []string
	for _, s := range r.Stages {
		if s.Err != "" {
			errs = append(errs, s.Err)
		}
	}
	if len(as) != len(ds)+len(errs) {
		t.Fatalf("%d commands for %d diagnostics and %d stage errors:\n%s", len(as), len(ds), len(errs), buf.String())
	}
	for i, d := range ds {
		a := as[i]
		level := map[diag.Severity]string{diag.Error: "error", diag.Warning: "warning", diag.Note: "notice"}[d.Severity]
		if a.level != level || a.props["file"] != d.File {
			t.Errorf("command %d is %s on %q, want %s on %q", i, a.level, a.props["file"], level, d.File)
		}
		if _, ok := a.props["line"]; ok != (d.Line > 0) {
			t.Errorf("command %d: line property present = %v, diagnostic line %d", i, ok, d.Line)
		}
	}
	for i, e := range errs {
		if a := as[len(ds)+i]; a.level != "error" || a.message != e {
			t.Errorf("stage error %d: got %s %q, want error %q", i, a.level, a.message, e)
		}
	}
}

// TestGitHubAnnotationLimit: at most MaxAnnotations commands per level, and one notice counting the rest.
func TestGitHubAnnotationLimit(t *testing.T) {
	many := func(sev diag.Severity, n int) []diag.Diagnostic {
		ds := make([]diag.Diagnostic, n)
		for i := range ds {
			ds[i] = diag.Diagnostic{Severity: sev, Check: "validate", File: "catalog/p/catalog.json", Line: i + 1, Message: fmt.Sprintf("%s %d", sev, i)}
		}
		return ds
	}
	max := report.MaxAnnotations
	for _, tc := range []struct {
		name                    string
		errors, warnings, notes int
		dropped                 int
	}{
		{"none", 0, 0, 0, 0},
		{"exactly the limit", max, max, max, 0},
		{"one error over", max + 1, 0, 0, 1},
		{"each level over", max + 2, max + 3, max + 4, 9},
		{"ten thousand", 10000, 3, 0, 10000 - max},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ds []diag.Diagnostic
			ds = append(ds, many(diag.Error, tc.errors)...)
			ds = append(ds, many(diag.Warning, tc.warnings)...)
			ds = append(ds, many(diag.Note, tc.notes)...)
			r := &report.Report{Stages: []report.Stage{{Name: "validate", Status: report.Fail, Diagnostics: ds}}}
			var buf bytes.Buffer
			if err := report.WriteGitHub(&buf, r, ""); err != nil {
				t.Fatal(err)
			}
			if buf.Len() == 0 {
				if tc.errors+tc.warnings+tc.notes != 0 {
					t.Fatal("no output")
				}
				return
			}
			as := parseCommands(t, buf.String())
			count := map[string]int{}
			var summaries []annotation
			for _, a := range as {
				if strings.Contains(a.message, "not annotated") {
					summaries = append(summaries, a)
					continue
				}
				count[a.level]++
			}
			for level, n := range map[string]int{"error": tc.errors, "warning": tc.warnings, "notice": tc.notes} {
				if want := min(n, max); count[level] != want {
					t.Errorf("%d %s commands, want %d", count[level], level, want)
				}
			}
			if tc.dropped == 0 {
				if len(summaries) != 0 {
					t.Errorf("a summary notice without dropped diagnostics: %q", summaries[0].message)
				}
				return
			}
			if len(summaries) != 1 {
				t.Fatalf("%d summary notices, want 1", len(summaries))
			}
			s := summaries[0]
			if s.level != "notice" || !strings.HasPrefix(s.message, fmt.Sprintf("%d more diagnostics ", tc.dropped)) {
				t.Errorf("summary = %s %q, want a notice counting %d", s.level, s.message, tc.dropped)
			}
			if as[len(as)-1].message != s.message {
				t.Errorf("the summary notice is not the last command")
			}
		})
	}
}
