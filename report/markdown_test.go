package report_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// huge is a report with n validate diagnostics (some with multi-byte text and hints) and graph details.
func huge(n int) *report.Report {
	ds := make([]diag.Diagnostic, n)
	for i := range ds {
		ds[i] = diag.Diagnostic{Severity: diag.Error, Check: "validate", Rule: "bundle-image-bad-pullspec",
			File: fmt.Sprintf("catalog/pkg-%04d/catalog.json", i%1000), Line: i + 1, Column: 3,
			Message: fmt.Sprintf("bundle \"pkg.v%d\": image <quay.io/ünïcode/%d> is not a valid reference", i, i)}
		if i%3 == 0 {
			ds[i].Hint = "use registry/repository@sha256:… instead"
		}
	}
	return &report.Report{Title: "catalog ./catalog", Stages: []report.Stage{
		{Name: "owners", Status: report.Pass, Summary: "alice may change the 1 touched packages/paths"},
		{Name: "validate", Status: report.Fail, Summary: fmt.Sprintf("%d errors", n), Diagnostics: ds},
		{Name: "graph", Status: report.Pass, Details: "#### pkg / stable\n\n- added entries: `pkg.v2`\n"},
	}, Outputs: map[string]string{"head_sha": "0123456789abcdef0123456789abcdef01234567"}}
}

var truncNote = regexp.MustCompile(`\n_…(\d+) more lines truncated to fit GitHub's (\d+)-character limit; see the JSON report\._\n$`)

// tailItems counts the units Markdown drops from the end: per stage with diagnostics or details, its
// heading, one line per diagnostic, and the details block.
func tailItems(r *report.Report) int {
	n := 0
	for _, s := range r.Stages {
		if len(s.Diagnostics) == 0 && s.Details == "" {
			continue
		}
		n += 1 + len(s.Diagnostics)
		if s.Details != "" {
			n++
		}
	}
	return n
}

func TestMarkdownTruncatesTenThousandDiagnostics(t *testing.T) {
	r := huge(10000)
	full := report.Markdown(r, 1<<30)
	if len(full) <= report.MaxMarkdown {
		t.Fatalf("the untruncated report is only %d bytes: the test needs more", len(full))
	}
	out := report.Markdown(r, 0)
	if len(out) > report.MaxMarkdown {
		t.Fatalf("%d bytes, more than the limit %d", len(out), report.MaxMarkdown)
	}
	if !utf8.ValidString(out) {
		t.Errorf("the truncated report is not valid UTF-8")
	}
	m := truncNote.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no truncation note at the end:\n…%s", out[len(out)-300:])
	}
	if m[2] != strconv.Itoa(report.MaxMarkdown) {
		t.Errorf("the note names limit %s, want %d", m[2], report.MaxMarkdown)
	}
	kept := out[:len(out)-len(m[0])]
	if !strings.HasPrefix(full, kept) {
		t.Fatalf("the truncated report is not a prefix of the full one")
	}
	if !strings.HasSuffix(kept, "\n") {
		t.Errorf("truncation cut a line: %q", kept[len(kept)-80:])
	}
	// Every tail item is either kept or counted in the note.
	dropped, _ := strconv.Atoi(m[1])
	keptItems := strings.Count(kept, "\n- `catalog/") + strings.Count(kept, "\n### ")
	if keptItems+dropped != tailItems(r) {
		t.Errorf("kept %d + dropped %d tail items, want %d in all", keptItems, dropped, tailItems(r))
	}
	// The note's space is all that is left unused, give or take one line.
	if slack := report.MaxMarkdown - len(out); slack > 400 {
		t.Errorf("%d bytes of the limit unused", slack)
	}
	for i := range 3 {
		if again := report.Markdown(huge(10000), 0); again != out {
			t.Fatalf("rendering %d differs from the first", i+2)
		}
	}
}

// TestMarkdownLimitIsExact sweeps the limit across the whole range: the output never exceeds it, is the
// full rendering once that fits, and is truncated (with the note) otherwise.
func TestMarkdownLimitIsExact(t *testing.T) {
	for _, r := range []*report.Report{sample(), huge(15)} {
		full := report.Markdown(r, 1<<30)
		for limit := 1; limit <= len(full)+2; limit++ {
			out := report.Markdown(r, limit)
			if len(out) > limit {
				t.Fatalf("Markdown(limit %d) is %d bytes", limit, len(out))
			}
			if !utf8.ValidString(out) {
				t.Fatalf("Markdown(limit %d) is not valid UTF-8", limit)
			}
			switch {
			case limit >= len(full) && out != full:
				t.Fatalf("Markdown(limit %d) truncated a %d-byte report", limit, len(full))
			case limit < len(full) && out == full:
				t.Fatalf("Markdown(limit %d) returned the whole %d-byte report", limit, len(full))
			}
		}
	}
}

func TestMarkdownEscaping(t *testing.T) {
	r := &report.Report{Stages: []report.Stage{{Name: "validate", Status: report.Fail,
		Summary:     "a | b\nc",
		Diagnostics: []diag.Diagnostic{{Severity: diag.Error, Check: "validate", Message: "<script>x</script>\nnext", Hint: "<b>\n"}}}}}
	out := report.Markdown(r, 0)
	for _, want := range []string{`| a \| b c |`, "**error** &lt;script&gt;x&lt;/script&gt;<br>↳ &lt;b&gt; \n\n  ```\n  next\n  ```\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script") {
		t.Errorf("raw HTML from a message in\n%s", out)
	}
}
