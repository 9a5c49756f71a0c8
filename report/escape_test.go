package report

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// Hostile names stay inside their code span and carry no Markdown; names shown as text carry none either.
func TestCodeSpanAndTextHoldHostileNames(t *testing.T) {
	for _, tc := range []struct{ in, span, text string }{
		{"foo-operator", "`foo-operator`", "foo-operator"},
		{"a`b", "``a`b``", "a\\`b"},
		{"``x```", "```` ``x``` ````", "\\`\\`x\\`\\`\\`"},
		{"`", "`` ` ``", "\\`"},
		{"", "` `", ""},
		{" padded ", "`  padded  `", " padded "},
		{"x\n# title\n|a|b|", "`x\\n# title\\n|a|b|`", "x # title \\|a\\|b\\|"},
		{"[click](https://evil.example)", "`[click](https://evil.example)`", "\\[click\\](https\u200b://evil.example)"},
		{"![img](x)", "`![img](x)`", "!\\[img\\](x)"},
		{"@org/team and #12", "`@org/team and #12`", "@\u200borg/team and #\u200b12"},
		{"<img src=x onerror=alert(1)>", "`<img src=x onerror=alert(1)>`", "&lt;img src=x onerror=alert(1)&gt;"},
		{"a\u202eb", "`a\\u202eb`", "a\\\\u202eb"},
		{"quay.io/x/y@sha256:00 a@b.c", "`quay.io/x/y@sha256:00 a@b.c`", "quay.io/x/y@sha256:00 a@b.c"},
		{"www.evil.example **b**", "`www.evil.example **b**`", "www\u200b.evil.example \\*\\*b\\*\\*"},
	} {
		if got := CodeSpan(tc.in); got != tc.span {
			t.Errorf("CodeSpan(%q) = %q, want %q", tc.in, got, tc.span)
		}
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
}

// A diagnostic on a hostile path with a hostile message: its line in the Markdown report is one list
// item whose code span holds the whole path.
func TestMarkdownHostileDiagnostic(t *testing.T) {
	path := "catalog/x` [pwn](https://evil.example) `y\n| a | b |\n|---|---|/catalog.json"
	r := &Report{Stages: []Stage{{Name: "validate", Status: Fail, Summary: "1 file | 2",
		Diagnostics: []diag.Diagnostic{{File: path, Line: 3, Severity: diag.Error, Message: `package "@admins [x](https://evil.example)" is bad`}}}}}
	md := Markdown(r, 0)
	span := "- ``" + "catalog/x` [pwn](https://evil.example) `y\\n| a | b |\\n|---|---|/catalog.json:3`` "
	if !strings.Contains(md, span) {
		t.Fatalf("the report does not show the path in one code span %s:\n%s", span, md)
	}
	outside := strings.Replace(md, span, "- ", 1)
	for _, bad := range []string{"](https://evil", "\n| a | b |", " @admins", "file | 2"} {
		if strings.Contains(outside, bad) {
			t.Errorf("the report holds %q outside code spans:\n%s", bad, md)
		}
	}
}
