package bot

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// renderedOutsideCode renders Markdown as GitHub does (CommonMark with GitHub's extensions, raw HTML
// kept: goldmark, the parser the bot reads comments with) and drops what code spans and code blocks hold,
// leaving the HTML that renders as Markdown.
func renderedOutsideCode(t *testing.T, md string) string {
	t.Helper()
	var out bytes.Buffer
	gh := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gh.Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	return codeElement.ReplaceAllString(out.String(), "<code></code>")
}

var codeElement = regexp.MustCompile(`(?s)<code[^>]*>.*?</code>`)

// markdownInjected is what the hostile names below would render as, outside code: a link, a mention, HTML,
// a table row.
var markdownInjected = []string{`href="https://evil`, "@octo/admins", "<b>", "<th>a</th>", "<td>a</td>"}

// The reader finds each injection once it escapes a code span (a run of backticks the name closes early,
// a line break, the name outside any span), and nothing while the spans hold it.
func TestRenderedOutsideCode(t *testing.T) {
	for md, want := range map[string]bool{
		"`` ` [pwn](https://evil.example/x) @octo/admins <b>bold</b> ` ``": false,
		"``` `` [pwn](https://evil.example/x) `` ```":                      false,
		"` ` [pwn](https://evil.example/x) `":                              true,
		"name @octo/admins here":                                           true,
		"`x` <b>bold</b>":                                                  true,
		"`stable`\n| a | b |\n|---|---|":                                   true,
		"<details>\n\n[pwn](https://evil.example/x)\n\n</details>":         true,
		"```\n[pwn](https://evil.example/x)\n| a | b |\n```":               false,
	} {
		rendered := renderedOutsideCode(t, md)
		got := false
		for _, bad := range markdownInjected {
			got = got || strings.Contains(rendered, bad)
		}
		if got != want {
			t.Errorf("%q renders %q: injection found %v, want %v", md, rendered, got, want)
		}
	}
}

// TestAttackMarkdownInjection: a pull request whose file path, channel and bundle names carry backticks,
// a link, a mention, HTML and a table row. The check run and the readiness comment show every name, but
// nothing of it renders as Markdown: no link, mention, HTML or table row outside a code span. (Before:
// only < and > were escaped; a backtick in a path ended its code span and the link after it rendered.)
func TestAttackMarkdownInjection(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	const link = "[pwn](https://evil.example/x)"
	hostile := "` " + link + " @octo/admins <b>bold</b> `"
	channel := "stable" + hostile + "\n| a | b |\n|---|---|"
	bundle := "foo-operator.v0.2.0" + hostile
	fooCatalog := `{"schema":"olm.package","name":"foo-operator","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo-operator","entries":[{"name":"foo-operator.v0.1.0"}]}
{"schema":"olm.channel","name":` + jsonString(channel) + `,"package":"foo-operator","entries":[{"name":` + jsonString(bundle) + `}]}
{"schema":"olm.bundle","name":"foo-operator.v0.1.0","package":"foo-operator","image":"` + h.bundleImage("foo-operator", "0.1.0") + `","properties":[{"type":"olm.package","value":{"packageName":"foo-operator","version":"0.1.0"}}]}
{"schema":"olm.bundle","name":` + jsonString(bundle) + `,"package":"foo-operator","image":"quay.io/x/y:v1","properties":[{"type":"olm.package","value":{"packageName":"foo-operator","version":"0.2.0"}}]}
`
	head := h.label(h.git.Commit("alice/md", main, "alice", "a hostile channel", map[string]string{
		"catalog/foo-operator/catalog.json":                  fooCatalog,
		"catalog/foo-operator/x" + hostile + "y/broken.json": "{not json",
	}), "HEAD")
	h.openPR(1, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	h.waitCheckRun("the check run to complete", head, func(cr githubtest.CheckRun) bool { return cr.Status == "completed" })
	cr := h.checkRunsOn(head)[0]
	h.waitFor("the readiness comment", func() bool { return h.readiness(1) != "" })

	for what, md := range map[string]string{"check run title": cr.Output.Title, "check run summary": cr.Output.Summary,
		"check run text": cr.Output.Text, "readiness comment": h.readiness(1)} {
		rendered := renderedOutsideCode(t, md)
		for _, bad := range markdownInjected {
			if strings.Contains(rendered, bad) {
				t.Errorf("the %s renders %q outside code spans:\n%s", what, bad, md)
			}
		}
	}
	if !strings.Contains(cr.Output.Summary, "broken.json") || !strings.Contains(cr.Output.Summary, "``") {
		t.Errorf("the check run does not name the hostile path in a code span:\n%s", cr.Output.Summary)
	}
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(data)
}
