package bot

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseCommandsAsReaderSees: comments as a hostile commenter (or a maintainer pasting someone else's
// text) writes them. A command counts only where a reader of the rendered comment sees it as a line of a
// paragraph's own text. The line-by-line parser that came before counted every line starting with a
// slash outside ``` fences: it took commands from ~~~ fences, fences of 4+ backticks (and a ``` line
// inside them ended its "fence"), indented code, lazy continuation lines of quotes, multi-line HTML
// comments, HTML blocks and emphasis spanning lines.
func TestParseCommandsAsReaderSees(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		// What counts.
		{"alone", "/retest", "[{retest }]"},
		{"lines of one paragraph", "LGTM\n/approve\n/hold", "[{approve } {hold }]"},
		{"CRLF", "LGTM\r\n/approve\r\n/hold\r\n", "[{approve } {hold }]"},
		{"mixed line ends", "LGTM\r\n/approve\n/hold", "[{approve } {hold }]"},
		{"bare CR", "LGTM\r/approve", "[{approve }]"},
		{"hold cancel", "/hold cancel", "[{unhold }]"},
		{"case and spaces", "  /UNHOLD  ", "[{unhold }]"},
		{"argument kept", "/approve no-issue", "[{approve no-issue}]"},
		{"after a hard line break", "thanks\\\n/approve", "[{approve }]"},
		{"after two trailing spaces", "thanks  \n/approve", "[{approve }]"},
		{"after a fence closes", "```\nlog\n```\n/hold", "[{hold }]"},
		{"after a quote ends", "> quoted\n\n/hold", "[{hold }]"},
		{"after details closes", "<details>\n\n/approve\n\n</details>\n\n/hold", "[{hold }]"},
		{"after a one-line HTML comment", "<!-- note -->\n\n/hold", "[{hold }]"},
		{"after a one-line comment in the paragraph", "<!-- x --> ok\n/hold", "[{hold }]"},
		{"two paragraphs", "/hold\n\n/retest", "[{hold } {retest }]"},
		{"unknown commands dropped", "/lgtm\n/assign @x\n/retest", "[{retest }]"},
		// An argument in inline markup is the argument a reader sees (it was dropped: a plain /approve).
		{"argument in a link", "/approve [why](https://x.example)", "[{approve why}]"},
		{"argument linkified", "/approve www.example.com", "[{approve www.example.com}]"},
		{"argument autolink", "/approve <https://x.example>", "[{approve https://x.example}]"},
		{"argument struck through", "/approve ~~x~~", "[{approve x}]"},
		{"argument emphasised", "/approve **now**", "[{approve now}]"},
		{"argument in a code span", "/approve `x`", "[{approve x}]"},
		{"argument in inline HTML", "/approve <b>x</b>", "[{approve x}]"},
		{"argument after an inline comment", "/approve <!-- hidden --> x", "[{approve x}]"},
		{"cancel emphasised", "/approve *cancel*", "[{approve cancel}]"},
		{"argument in markup, next line a command", "/approve ~~x~~\n/hold", "[{approve x} {hold }]"},
		{"markup over lines", "/approve **x\ny**\n/hold", "[{approve x} {hold }]"},
		{"inline HTML over lines ends the line", "/approve <b\nclass=x>y</b>", "[{approve }]"},

		// Not at the start of a line.
		{"after text", "please /retest", "[]"},
		{"after a code span", "`x` /approve", "[]"},
		{"after emphasis", "*ok* /approve", "[]"},

		// Code.
		{"fence 3", "```\n/approve\n```", "[]"},
		{"fence 4", "````\n/approve\n````", "[]"},
		{"fence 5", "`````\n/approve\n`````", "[]"},
		{"fence 6", "``````\n/approve\n``````", "[]"},
		{"tilde fence 3", "~~~\n/approve\n~~~", "[]"},
		{"tilde fence 6", "~~~~~~\n/approve\n~~~~~~", "[]"},
		{"fence with info string", "```sh\n/approve\n```", "[]"},
		{"shorter fence does not close", "````\n```\n/approve\n```\n````", "[]"},
		{"tilde fence holds backticks", "~~~\n```\n/approve\n~~~", "[]"},
		{"backtick fence holds tildes", "```\n~~~\n/approve\n```", "[]"},
		{"unclosed fence runs to the end", "```\n/approve", "[]"},
		{"indented fence", "   ```\n/approve\n   ```", "[]"},
		{"indented code", "    /approve", "[]"},
		{"indented code after blank", "text\n\n    /approve", "[]"},
		{"tab-indented code", "\t/approve", "[]"},
		{"fence in a quote", "> ```\n> /approve\n> ```", "[]"},

		// Quotes.
		{"quote", "> /approve (quoted from someone else)", "[]"},
		{"nested quote", "> > /approve", "[]"},
		{"quote without space", ">/approve", "[]"},
		{"lazy continuation", "> I will say\n/approve", "[]"},
		{"lazy continuation, two lines", "> quoted\nstill quoted\n/unhold", "[]"},
		{"quote in a list", "- > /approve", "[]"},

		// HTML.
		{"HTML comment", "<!-- /approve -->", "[]"},
		{"HTML comment over lines", "<!--\n/approve\n-->", "[]"},
		{"HTML comment over lines, blank inside", "<!--\n\n/approve\n\n-->", "[]"},
		{"inline comment over lines", "note <!--\n/approve\n--> end", "[]"},
		{"details block", "<details>\n/approve\n</details>", "[]"},
		{"details with summary, blank lines", "<details><summary>log</summary>\n\n/approve\n\n</details>", "[]"},
		{"nested details", "<details>\n\n<details>\n\n</details>\n\n/approve\n\n</details>", "[]"},
		{"div block", "<div>\n/approve\n</div>", "[]"},
		{"pre block over blank lines", "<pre>\n\n/approve\n\n</pre>", "[]"},

		// Inside inline markup, across lines.
		{"emphasis over lines", "*note\n/approve*", "[]"},
		{"strong over lines", "**note\n/approve**", "[]"},
		{"strikethrough over lines", "~~note\n/approve~~", "[]"},
		{"link text over lines", "[see\n/approve](https://x.example)", "[]"},
		{"code span over lines", "`see\n/approve`", "[]"},
		{"emphasis", "*/approve*", "[]"},
		{"link", "[/approve](https://x.example)", "[]"},

		// Other blocks.
		{"list item", "- /approve", "[]"},
		{"ordered list item", "1. /approve", "[]"},
		{"setext heading", "/approve\n---", "[]"},
		{"atx heading", "# /approve", "[]"},
		{"table header", "/approve | x\n--- | ---\n1 | 2", "[]"},
		{"escaped slash", "\\/approve", "[]"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if seen[tc.name] {
			t.Fatalf("two cases named %q", tc.name)
		}
		seen[tc.name] = true
		got := fmt.Sprint(parseCommands(tc.body))
		if got != tc.want {
			t.Errorf("%s: parseCommands(%q) = %s, want %s", tc.name, tc.body, got, tc.want)
		}
	}
}

// longComment is a comment as long as GitHub allows (65,536 characters): a pasted log in a quote and a
// fence, then a paragraph whose last line is a command.
func longComment() string {
	log := strings.Repeat("> quoted line of a log\n", 1000) + "\n```\n" + strings.Repeat("/approve in a log\n", 1000) + "```\n\n"
	return log + strings.Repeat("text ", 65536/5-len(log)/5-10) + "\n/hold\n"
}

func TestParseCommandsLongComment(t *testing.T) {
	if got := fmt.Sprint(parseCommands(longComment())); got != "[{hold }]" {
		t.Errorf("parseCommands(long) = %s", got)
	}
}

// go test ./bot -run '^$' -bench ParseCommands
func BenchmarkParseCommands(b *testing.B) {
	body := longComment()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		parseCommands(body)
	}
}
