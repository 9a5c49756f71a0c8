package template

import (
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// lines finds where things are in a template (its first document), for error positions. A template
// that does not parse as YAML has no positions but the line of its syntax error.
type lines struct {
	root    *yaml.Node
	errLine int
}

var yamlErrLine = regexp.MustCompile(`line (\d+)`)

func newLines(data []byte) *lines {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		l := &lines{}
		if m := yamlErrLine.FindStringSubmatch(err.Error()); m != nil {
			l.errLine, _ = strconv.Atoi(m[1])
		}
		return l
	}
	l := &lines{}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		l.root = doc.Content[0]
	}
	return l
}

// field returns the value of key (matched case-insensitively, as encoding/json matches) in mapping m.
func field(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if strings.EqualFold(m.Content[i].Value, key) {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

// top is the line of the template's top-level key, or of the document when it has none.
func (l *lines) top(key string) int {
	if l.root == nil {
		return max(l.errLine, 1)
	}
	if k, _ := field(l.root, key); k != nil {
		return k.Line
	}
	return l.root.Line
}

// item is the line of the i-th element of the sequence at path (keys from the top).
func (l *lines) item(i int, path ...string) int {
	n := l.root
	for _, key := range path {
		_, n = field(n, key)
	}
	if n == nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
		return l.top(path[0])
	}
	return n.Content[i].Line
}

// itemField is the line of key's value in the i-th element of the sequence at path.
func (l *lines) itemField(i int, key string, path ...string) int {
	n := l.root
	for _, k := range path {
		_, n = field(n, k)
	}
	if n == nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
		return l.top(path[0])
	}
	if _, v := field(n.Content[i], key); v != nil {
		return v.Line
	}
	return n.Content[i].Line
}
