package release

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/render"
)

// width is the line width of upstream's writer (ruamel.yaml's default best_width): a plain scalar that
// would end past it starts on the next line, indented two more than its key.
const width = 80

// text builds inserted lines as ruamel.yaml writes them. wrap says long scalars go on the next line, as
// upstream's writer has since mid-2025; before, it wrote them on one line (newText tells which a template
// was written by).
type text struct {
	bytes.Buffer
	wrap bool
}

// newText is a writer in data's style.
func newText(data []byte) *text { return &text{wrap: !hasLongLine(data)} }

// hasLongLine reports whether data has a "key: value" line (or "- key: value") longer than width whose
// plain value could have gone on the next line: then its writer did not wrap.
func hasLongLine(data []byte) bool {
	for _, l := range lines(data) {
		if len([]rune(l)) <= width {
			continue
		}
		t := strings.TrimPrefix(strings.TrimLeft(l, " "), "- ")
		if k, v, ok := strings.Cut(t, ": "); ok && !strings.ContainsAny(k, " '\"") && v != "" && !strings.ContainsAny(v[:1], "'\"|>[{") && !strings.Contains(v, " ") {
			return true
		}
	}
	return false
}

// pair writes "key: value" at column col (prefix "- " when item), the value quoted as ruamel quotes it.
func (t *text) pair(col int, item bool, key, value string) {
	prefix := strings.Repeat(" ", col)
	keyCol := col
	if item {
		prefix += "- "
		keyCol += 2
	}
	v := scalar(value)
	line := prefix + key + ": " + v
	if t.wrap && len([]rune(line)) > width && !strings.HasPrefix(v, "'") {
		line = prefix + key + ": \n" + strings.Repeat(" ", keyCol+2) + v
	}
	t.WriteString(line + "\n")
}

// key writes "key:" (a block collection follows) at column col.
func (t *text) key(col int, item bool, key string) {
	t.WriteString(strings.Repeat(" ", col))
	if item {
		t.WriteString("- ")
	}
	t.WriteString(key + ":\n")
}

// scalar is v written plain when it reads back as the same string, else single-quoted.
func scalar(v string) string {
	if plain(v) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// plain reports whether v can be written plain: it reads back as the string v (bump's rule), and
// ruamel.yaml, upstream's writer, would not quote it (no quote, and no indicator it quotes first).
func plain(v string) bool {
	return render.PlainSafe(v) && !strings.ContainsAny(v, "'\"") &&
		!(strings.ContainsAny(v[:1], "!&*?|>%@`[]{},-") && !(v[0] == '-' && len(v) > 1 && v[1] != ' '))
}

// insertion is text to put before a line of the original (1-based; one past the last line: at the end).
type insertion struct {
	line int
	text []byte
}

// splice applies insertions (several at one line keep their order) to data. Upstream's writer starts
// every template with the document marker "---": a template without one gets it as its first line.
func splice(data []byte, ins []insertion) []byte {
	if !slices.Contains(lines(data), "---") {
		ins = append([]insertion{{1, []byte("---\n")}}, ins...)
	}
	slices.SortStableFunc(ins, func(a, b insertion) int { return a.line - b.line })
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(slices.Clip(data), '\n')
	}
	var out bytes.Buffer
	line, off := 1, 0
	for _, in := range ins {
		for line < in.line && off < len(data) {
			i := bytes.IndexByte(data[off:], '\n')
			out.Write(data[off : off+i+1])
			off += i + 1
			line++
		}
		out.Write(in.text)
	}
	out.Write(data[off:])
	return out.Bytes()
}

// after is the line before which lines that follow node n (its whole subtree) go: past n's last line and
// any continuation of it, before the blank or comment lines that precede the next node of the document.
func after(data []byte, doc, n *yaml.Node) int {
	last := lastLine(n)
	next := 0
	var walk func(*yaml.Node)
	walk = func(x *yaml.Node) {
		if x.Line > last && (next == 0 || x.Line < next) {
			next = x.Line
		}
		for _, c := range x.Content {
			walk(c)
		}
	}
	walk(doc)
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if next == 0 {
		next = len(lines) + 1
	}
	for next-1 > last {
		l := bytes.TrimSpace(lines[next-2])
		if len(l) > 0 && l[0] != '#' {
			break
		}
		next--
	}
	return next
}

// lastLine is the largest line of n's subtree.
func lastLine(n *yaml.Node) int {
	l := n.Line
	for _, c := range n.Content {
		l = max(l, lastLine(c))
	}
	return l
}

// dashColumn is the 0-based column of the "- " of seq's items, which must be a block sequence with items.
func dashColumn(data []byte, seq *yaml.Node, what string) (int, error) {
	if seq.Kind != yaml.SequenceNode || seq.Style&yaml.FlowStyle != 0 || len(seq.Content) == 0 {
		return 0, fmt.Errorf("line %d: %s is not a block list with items; add the first one by hand", seq.Line, what)
	}
	first := seq.Content[0]
	lines := bytes.Split(data, []byte("\n"))
	col := first.Column - 3
	if first.Line > len(lines) || col < 0 || col > len(lines[first.Line-1]) || !bytes.HasPrefix(lines[first.Line-1][col:], []byte("- ")) {
		return 0, fmt.Errorf("line %d: %s's items are not written \"- key: value\"; edit it by hand", first.Line, what)
	}
	return col, nil
}

// lines splits data into its lines (a last line without a newline counts).
func lines(data []byte) []string {
	s := string(bytes.TrimSuffix(data, []byte("\n")))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// keepsLines reports whether every line of before is in after, in order.
func keepsLines(before, after []byte) bool {
	old, i := lines(before), 0
	for _, l := range lines(after) {
		if i < len(old) && l == old[i] {
			i++
		}
	}
	return i == len(old)
}
