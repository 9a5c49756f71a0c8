package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits on hostile input. A configuration or owners file is small: anything bigger than MaxFileSize is
// refused before parsing, and a document whose tree, with every alias expanded, has more than MaxNodes
// nodes (a YAML bomb: nested aliases that expand exponentially) is refused before it is walked.
const (
	MaxFileSize = 1 << 20
	MaxNodes    = 200_000
	maxDiags    = 200
)

// yamlProblem is a file-level failure to read YAML: the rule suffix ("syntax", "too-large", ...), a line
// (0 when unknown) and a message.
type yamlProblem struct {
	rule string
	line int
	msg  string
}

var yamlLineRE = lazyRegexp(`^yaml: line (\d+): (.*)$`)

// parseYAML parses data as exactly one YAML document and returns its root node (nil for an empty file).
func parseYAML(data []byte) (*yaml.Node, *yamlProblem) {
	if len(data) > MaxFileSize {
		return nil, &yamlProblem{rule: "too-large", msg: fmt.Sprintf("file is %d bytes, more than the %d allowed", len(data), MaxFileSize)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, syntaxProblem(err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxProblem(err)
	default:
		return nil, &yamlProblem{rule: "syntax", line: extra.Line, msg: "more than one YAML document: the file must hold exactly one"}
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	if size := expandedSize(&doc, map[*yaml.Node]int{}, MaxNodes); size > MaxNodes {
		return nil, &yamlProblem{rule: "too-complex", line: doc.Content[0].Line,
			msg: fmt.Sprintf("the document expands to more than %d YAML nodes (aliases included): refusing it", MaxNodes)}
	}
	return doc.Content[0], nil
}

func syntaxProblem(err error) *yamlProblem {
	msg, line := strings.TrimPrefix(err.Error(), "yaml: "), 0
	if m := yamlLineRE().FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	// yaml.v3 numbers lines from 1 in scanner errors but from 0 in parser errors, which are the
	// "did not find expected ..." ones (they point at the start of the unfinished collection, or where the
	// parser gave up when that collection starts on the first line).
	if strings.HasPrefix(msg, "did not find expected") {
		line++
	}
	return &yamlProblem{rule: "syntax", line: line, msg: "invalid YAML: " + msg}
}

// expandedSize counts the nodes of n with every alias expanded, saturating above limit; memo holds the
// sizes of finished nodes, and a node met again while still being counted (a cyclic alias) is over limit.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, limit int) int {
	if size, done := memo[n]; done {
		if size < 0 {
			return limit + 1
		}
		return size
	}
	memo[n] = -1
	size := 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size += expandedSize(n.Alias, memo, limit)
	}
	for _, c := range n.Content {
		if size > limit {
			break
		}
		size += expandedSize(c, memo, limit)
	}
	size = min(size, limit+1)
	memo[n] = size
	return size
}

// resolve follows aliases (parseYAML has ruled out cycles).
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is an explicit or empty null ("key:" or "key: null").
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// kindName names a node's type for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!null":
			return "null"
		}
		return "a string"
	}
	return "an unsupported YAML node"
}
