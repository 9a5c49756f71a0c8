package bot

import (
	"bytes"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// Cmd is one slash command of a comment.
type Cmd struct {
	Name string `json:"name"` // retest, hold, unhold, approve
	Arg  string `json:"arg,omitempty"`
}

// commentMarkdown parses comments as GitHub renders them: CommonMark with GitHub's extensions (tables,
// strikethrough, autolinks, task lists).
var commentMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// parseCommands finds the commands of a comment as a reader of the rendered comment sees them: a line of
// a top-level paragraph that starts with /retest, /hold, /unhold or /approve in plain text ("/hold
// cancel" is /unhold, as in Prow; /approve keeps its argument: "cancel" withdraws, any other is
// refused). Nothing else counts: code (fenced with ``` or ~~~ of any length, or indented), block quotes
// (their lazy continuation lines included), lists, headings, tables, HTML blocks and comments, what a
// <details> element folds away, and text inside emphasis, links or inline HTML.
func parseCommands(body string) []Cmd {
	src := []byte(strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(body))
	doc := commentMarkdown.Parser().Parse(text.NewReader(src))
	var out []Cmd
	folded := 0 // <details> elements open at this point of the document
	for n := doc.FirstChild(); n != nil; n = n.NextSibling() {
		switch n := n.(type) {
		case *ast.HTMLBlock:
			folded = max(0, folded+detailsDepth(htmlBlockText(n, src)))
		case *ast.Paragraph:
			if folded == 0 {
				out = append(out, paragraphCommands(n, src)...)
			}
		}
	}
	return out
}

// paragraphCommands are the commands of a paragraph's lines: plain text at a line's start.
func paragraphCommands(p *ast.Paragraph, src []byte) []Cmd {
	var out []Cmd
	lineStart := true
	for n := p.FirstChild(); n != nil; n = n.NextSibling() {
		t, ok := n.(*ast.Text)
		if ok && lineStart {
			if c, ok := command(lineText(t, src)); ok {
				out = append(out, c)
			}
		}
		// The next line starts after a text ending in a line break; any other inline (code span, emphasis,
		// link, HTML) continues the line it is on, or ends inside its own markup.
		lineStart = ok && (t.SoftLineBreak() || t.HardLineBreak())
	}
	return out
}

// lineText is the text a reader sees from t to the end of its line: text, and the text inside the inline
// markup that follows it on the line (links and autolinks, emphasis, strikethrough, code spans), so that an
// argument in markup is still the command's argument ("/approve ~~x~~", "/approve www.example.com" and
// "/approve <b>x</b>" each read "/approve x", never a plain /approve). goldmark splits text at characters
// that might start markup.
func lineText(t *ast.Text, src []byte) string {
	var b strings.Builder
	for n := ast.Node(t); n != nil; n = n.NextSibling() {
		if visibleText(n, src, &b) {
			break
		}
	}
	return b.String()
}

// visibleText appends what a reader sees of n to b, up to the line's end; it reports whether the line ends
// in n. Inline HTML shows nothing of its own (the text between its tags is text nodes).
func visibleText(n ast.Node, src []byte, b *strings.Builder) bool {
	switch n := n.(type) {
	case *ast.Text:
		b.Write(n.Segment.Value(src))
		return n.SoftLineBreak() || n.HardLineBreak()
	case *ast.String:
		b.Write(n.Value)
		return false
	case *ast.AutoLink:
		b.Write(n.Label(src))
		return false
	case *ast.RawHTML:
		for i := range n.Segments.Len() {
			if seg := n.Segments.At(i); bytes.IndexByte(seg.Value(src), '\n') >= 0 {
				return true
			}
		}
		b.WriteByte(' ')
		return false
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if visibleText(c, src, b) {
			return true
		}
	}
	return false
}

// command reads one line of plain text as a command.
func command(line string) (Cmd, bool) {
	line = strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(line, "/") {
		return Cmd{}, false
	}
	fields := strings.Fields(line)
	name := strings.ToLower(strings.TrimPrefix(fields[0], "/"))
	arg := ""
	if len(fields) > 1 {
		arg = strings.ToLower(fields[1])
	}
	switch {
	case name == "hold" && arg == "cancel":
		return Cmd{Name: "unhold"}, true
	case name == "retest", name == "hold", name == "unhold", name == "approve":
		return Cmd{Name: name, Arg: arg}, true
	}
	return Cmd{}, false
}

// htmlBlockText is an HTML block's source, its closing line included.
func htmlBlockText(n *ast.HTMLBlock, src []byte) string {
	var b strings.Builder
	for i := 0; i < n.Lines().Len(); i++ {
		line := n.Lines().At(i)
		b.Write(line.Value(src))
	}
	if n.HasClosure() {
		closure := n.ClosureLine
		b.Write(closure.Value(src))
	}
	return b.String()
}

// detailsDepth is how many <details> elements an HTML block opens, less those it closes (comments
// dropped: a tag inside one is no tag).
func detailsDepth(html string) int {
	html = strings.ToLower(html)
	for {
		i := strings.Index(html, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(html[i+4:], "-->")
		if j < 0 {
			html = html[:i]
			break
		}
		html = html[:i] + html[i+4+j+3:]
	}
	return tagCount(html, "<details") - strings.Count(html, "</details")
}

// tagCount counts opening tags named by prefix (followed by '>', a space or the end of a line, so that
// <detailsx> is not <details>).
func tagCount(html, prefix string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(html[i:], prefix)
		if j < 0 {
			return n
		}
		i += j + len(prefix)
		if i == len(html) || strings.ContainsRune("> \t\n/", rune(html[i])) {
			n++
		}
	}
}
