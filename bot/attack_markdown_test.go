package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// outsideCodeSpans drops the code spans of Markdown text as CommonMark reads them (a run of n backticks
// opens one, the next run of exactly n closes it; a backslash-escaped backtick opens none), leaving what
// GitHub renders as Markdown.
func outsideCodeSpans(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); {
		switch {
		case md[i] == '\\' && i+1 < len(md):
			b.WriteString(md[i : i+2])
			i += 2
		case md[i] == '`':
			n := 0
			for i+n < len(md) && md[i+n] == '`' {
				n++
			}
			end := -1
			for j := i + n; j < len(md); {
				if md[j] != '`' {
					j++
					continue
				}
				m := 0
				for j+m < len(md) && md[j+m] == '`' {
					m++
				}
				if m == n {
					end = j + m
					break
				}
				j += m
			}
			if end < 0 { // no closing run: the backticks are literal
				b.WriteString(md[i : i+n])
				i += n
				continue
			}
			b.WriteString("<code>")
			i = end
		default:
			b.WriteByte(md[i])
			i++
		}
	}
	return b.String()
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
		rendered := outsideCodeSpans(md)
		for _, bad := range []string{"](https://evil", "@octo/admins", "<b>", "\n| a | b |"} {
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
