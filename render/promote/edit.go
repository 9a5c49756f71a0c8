package promote

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
)

// width is the line width of upstream's writer (ruamel.yaml's default best_width).
const width = 80

// AddCatalog returns the ci.yaml data with catalog target appended to the catalog_names of the first
// fbc.catalog_mapping entry that names catalog source (upstream's promotion adds the new catalog to the
// template the previous one renders from), and the line the name is on. Only the list changes: a block
// list gains a line "- <target>" after its last item (and after the comments that follow it, which
// upstream's writer keeps with that item); a flow list gains ", <target>" before its "]", on the next
// line when the line would pass column 80, as upstream's writer wraps it. Every other byte stays. It
// returns an error, naming the line, when no entry names source or the list is not written in a form
// it can extend.
func AddCatalog(data []byte, source, target string) ([]byte, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, 0, err
	}
	if len(doc.Content) == 0 {
		return nil, 0, fmt.Errorf("empty document")
	}
	_, fbc := template.Field(doc.Content[0], "fbc")
	_, list := template.Field(fbc, "catalog_mapping")
	if list == nil || list.Kind != yaml.SequenceNode {
		return nil, 0, fmt.Errorf("no fbc.catalog_mapping list")
	}
	for _, item := range list.Content {
		key, names := template.Field(item, "catalog_names")
		if names == nil || names.Kind != yaml.SequenceNode || len(names.Content) == 0 || !holds(names, source) {
			continue
		}
		var out []byte
		var line int
		var err error
		if names.Style&yaml.FlowStyle != 0 {
			out, line, err = appendFlow(data, key, names, target)
		} else {
			out, line, err = appendBlock(data, names, target)
		}
		if err != nil {
			return nil, 0, err
		}
		if err := readsBack(data, out, source, target); err != nil {
			return nil, 0, fmt.Errorf("line %d: the edit does not read back as %s added (%v); add it by hand", names.Line, target, err)
		}
		return out, line, nil
	}
	return nil, 0, fmt.Errorf("no fbc.catalog_mapping entry names %s", source)
}

// holds reports whether the sequence names has a scalar value v.
func holds(names *yaml.Node, v string) bool {
	for _, n := range names.Content {
		if n.Kind == yaml.ScalarNode && n.Value == v {
			return true
		}
	}
	return false
}

// scalar is v as upstream's writer writes a new list item: plain when it reads back as the string,
// else single-quoted.
func scalar(v string) string {
	if render.PlainSafe(v) && !strings.ContainsAny(v, `'"#,[]{}`) {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", "''") + "'"
}

// appendBlock inserts "- target" after the last item of the block list names, at its items' column:
// after the comment lines that follow the item (upstream's writer keeps them with it), before the blank
// lines that end the gap.
func appendBlock(data []byte, names *yaml.Node, target string) ([]byte, int, error) {
	ls := splitLines(data)
	last := names.Content[len(names.Content)-1]
	col := -1
	if last.Line <= len(ls) {
		col = byteOffset(ls[last.Line-1], last.Column-1) - 2
	}
	if col < 0 || !strings.HasPrefix(ls[last.Line-1][col:], "- ") {
		return nil, 0, fmt.Errorf("line %d: catalog_names' items are not written \"- name\"; add %s by hand", last.Line, target)
	}
	at := last.Line // insert after line at (1-based)
	for i := last.Line; i < len(ls); i++ {
		t := strings.TrimSpace(ls[i])
		if t == "" {
			continue
		}
		if !strings.HasPrefix(t, "#") {
			break
		}
		at = i + 1
	}
	item := strings.Repeat(" ", col) + "- " + scalar(target)
	out := make([]string, 0, len(ls)+1)
	out = append(out, ls[:at]...)
	out = append(out, item)
	out = append(out, ls[at:]...)
	return joinLines(out, data), at + 1, nil
}

// appendFlow inserts ", target" after the last item of the flow list names, which must close with "]"
// right after it. Upstream's writer (ruamel.yaml, mapping indent 2, sequence indent 4) breaks the line
// when the comma ends past column 80 (the item on the next line at the list's indentation, the key's
// column plus 2), or when the item would (the break after ", ", the item at the key's column plus 6).
func appendFlow(data []byte, key, names *yaml.Node, target string) ([]byte, int, error) {
	ls := splitLines(data)
	last := names.Content[len(names.Content)-1]
	if last.Line > len(ls) {
		return nil, 0, fmt.Errorf("line %d: catalog_names is not a list it can extend", names.Line)
	}
	text := ls[last.Line-1]
	end, ok := scalarEnd(text, byteOffset(text, last.Column-1))
	rest := strings.TrimLeft(text[min(end, len(text)):], " ")
	if !ok || !strings.HasPrefix(rest, "]") {
		return nil, 0, fmt.Errorf("line %d: catalog_names' last item is not followed by \"]\" on its line; add %s by hand", last.Line, target)
	}
	item, keyCol := scalar(target), key.Column-1
	var ins string
	line := last.Line
	switch col := len([]rune(text[:end])) + 1; {
	case col > width:
		ins, line = ",\n"+strings.Repeat(" ", keyCol+2)+item, line+1
	case col+1+len([]rune(item)) > width:
		ins, line = ", \n"+strings.Repeat(" ", keyCol+6)+item, line+1
	default:
		ins = ", " + item
	}
	ls[last.Line-1] = text[:end] + ins + text[end:]
	return joinLines(ls, data), line, nil
}

// byteOffset is the byte offset in line of its rune column col (0-based, as the YAML parser counts), -1
// past its end.
func byteOffset(line string, col int) int {
	n := 0
	for i := range line {
		if n == col {
			return i
		}
		n++
	}
	return -1
}

// scalarEnd is the byte offset in line just past the flow scalar that starts at offset start (quoted or
// plain); ok is false when it cannot tell.
func scalarEnd(line string, start int) (int, bool) {
	if start < 0 || start >= len(line) {
		return 0, false
	}
	switch q := line[start]; q {
	case '"', '\'':
		for i := start + 1; i < len(line); i++ {
			switch {
			case q == '"' && line[i] == '\\':
				i++
			case line[i] == q && q == '\'' && i+1 < len(line) && line[i+1] == '\'':
				i++
			case line[i] == q:
				return i + 1, true
			}
		}
		return 0, false
	}
	i := start
	for i < len(line) && !strings.ContainsRune(",]#", rune(line[i])) {
		i++
	}
	return len(strings.TrimRight(line[:i], " ")), true
}

// readsBack checks that out is data with target appended to the catalog_names that names source, and
// nothing else changed.
func readsBack(data, out []byte, source, target string) error {
	var before, after any
	if err := yaml.Unmarshal(data, &before); err != nil {
		return err
	}
	if err := yaml.Unmarshal(out, &after); err != nil {
		return err
	}
	m, _ := before.(map[string]any)
	fbc, _ := m["fbc"].(map[string]any)
	list, _ := fbc["catalog_mapping"].([]any)
	for _, e := range list {
		entry, _ := e.(map[string]any)
		names, _ := entry["catalog_names"].([]any)
		for _, n := range names {
			if n == source {
				entry["catalog_names"] = append(names, target)
				if !reflect.DeepEqual(before, after) {
					return fmt.Errorf("the file says more or less than that")
				}
				return nil
			}
		}
	}
	return fmt.Errorf("no entry names %s", source)
}

// splitLines splits data into lines without their newlines (a last line without one counts).
func splitLines(data []byte) []string {
	s := string(bytes.TrimSuffix(data, []byte("\n")))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// joinLines joins lines with newlines, ending with one as data did (or when data was empty).
func joinLines(lines []string, data []byte) []byte {
	s := strings.Join(lines, "\n")
	if len(data) == 0 || data[len(data)-1] == '\n' {
		s += "\n"
	}
	return []byte(s)
}
