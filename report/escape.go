package report

import (
	"fmt"
	"strings"
	"unicode"
)

// Names in a report come from the pull request (package, channel and bundle names, file paths, image
// references): each is shown either in a code span (CodeSpan) or as escaped text (Text), never as
// Markdown, so a hostile name cannot end its span, add a link, image, mention, HTML or a table row to a
// check run, step summary or comment.

// CodeSpan returns s as one Markdown code span, on one line, showing s as written: the fence is one
// backtick longer than the longest run of backticks in s (backslashes do not escape inside a code span),
// and control and bidirectional-formatting characters are shown as Go escapes (\n, \u202e) so s cannot end
// the line or reorder what is shown. Inside a table cell, pass the span through the cell escape too (a
// pipe splits a cell even in a code span).
func CodeSpan(s string) string {
	s = visible(s)
	if s == "" {
		return "` `"
	}
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		// one space each side, which the span drops, keeps the fence apart from s's own backticks
		s = " " + s + " "
	}
	return fence + s + fence
}

// Text returns s as inline Markdown text shown as written, on one line (a line break becomes a space):
// Markdown's punctuation is escaped with backslashes, < > & as entities (no HTML), and a zero-width space
// breaks what GitHub would link: @ starting a mention, # before a number (an issue), :// and www. (a URL).
// An @ inside a word (an image digest reference, an e-mail address) is left alone.
func Text(s string) string {
	s = visible(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
	var b strings.Builder
	b.Grow(len(s))
	prev := ' '
	for i, r := range s {
		switch {
		case strings.ContainsRune("\\`*_[]|~", r): // "(" and "!" start nothing without "["
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r == '@' && !inWord(prev), r == '#' && strings.IndexAny(s[i+1:], "0123456789") == 0:
			b.WriteRune(r)
			b.WriteString("\u200b")
		case r == ':' && strings.HasPrefix(s[i:], "://"), r == '.' && strings.HasSuffix(s[:i], "www"):
			b.WriteString("\u200b")
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		prev = r
	}
	return b.String()
}

func inWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.'
}

// visible replaces control and bidirectional-formatting characters with Go escapes.
func visible(s string) string {
	if strings.IndexFunc(s, hidden) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case hidden(r) && r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func hidden(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029'
}
