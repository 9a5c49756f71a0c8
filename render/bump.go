package render

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/name"
	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// Bump returns the references config data with reference refName's image replaced by newImage. Only the
// bytes of that one scalar change: comments, order, indentation and the scalar's quoting style stay (a
// plain scalar becomes double-quoted only if newImage cannot be written plain). The result is parsed
// again and must differ from the input in that image alone.
func Bump(data []byte, refName, newImage string) ([]byte, error) {
	if !isLocalPath(newImage) {
		if _, err := name.ParseReference(newImage, name.StrictValidation); err != nil {
			return nil, diag.UsageError(fmt.Errorf("bump %s: image %q: %w", refName, newImage, err))
		}
	}
	before, node, err := imageNode(data, refName)
	if err != nil {
		return nil, err
	}
	start, end, err := scalarSpan(data, node)
	if err != nil {
		return nil, fmt.Errorf("bump %s: %w", refName, err)
	}
	out := make([]byte, 0, len(data)+len(newImage))
	out = append(out, data[:start]...)
	out = append(out, encodeScalar(newImage, node.Style)...)
	out = append(out, data[end:]...)
	var after yaml.Node
	if err := yaml.Unmarshal(out, &after); err != nil || !sameExcept(before, &after, node, newImage) {
		return nil, fmt.Errorf("bump %s: writing %q on line %d would change more than the image; edit it by hand", refName, newImage, node.Line)
	}
	return out, nil
}

// imageNode finds the image scalar of the reference named refName.
func imageNode(data []byte, refName string) (*yaml.Node, *yaml.Node, error) {
	doc := &yaml.Node{}
	if err := yaml.Unmarshal(data, doc); err != nil {
		return nil, nil, diag.InvalidError(fmt.Errorf("bump %s: %w", refName, err))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, diag.InvalidError(fmt.Errorf("bump %s: the references config is not a mapping", refName))
	}
	root := doc.Content[0]
	var refs *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "references" {
			refs = root.Content[i+1]
		}
	}
	var found *yaml.Node
	if refs != nil {
		for _, item := range refs.Content {
			var nameNode, imageNode *yaml.Node
			for j := 0; j+1 < len(item.Content); j += 2 {
				switch item.Content[j].Value {
				case "name":
					nameNode = item.Content[j+1]
				case "image":
					imageNode = item.Content[j+1]
				}
			}
			if nameNode != nil && nameNode.Value == refName && imageNode != nil {
				if found != nil {
					return nil, nil, diag.UsageError(fmt.Errorf("bump: reference %q appears twice (lines %d and %d)", refName, found.Line, imageNode.Line))
				}
				found = imageNode
			}
		}
	}
	if found == nil {
		return nil, nil, diag.UsageError(fmt.Errorf("bump: the references config has no reference named %q with an image", refName))
	}
	if found.Kind == yaml.ScalarNode && found.Value == "" {
		return nil, nil, diag.UsageError(fmt.Errorf("bump %s: the image on line %d is empty; write it by hand", refName, found.Line))
	}
	if found.Alias != nil || found.Kind != yaml.ScalarNode {
		return nil, nil, diag.UsageError(fmt.Errorf("bump %s: the image on line %d is an alias or not a scalar; edit it by hand", refName, found.Line))
	}
	return doc, found, nil
}

// scalarSpan returns the byte range of a single-line scalar's source text (quotes included).
func scalarSpan(data []byte, n *yaml.Node) (int, int, error) {
	if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return 0, 0, fmt.Errorf("the image on line %d is a block scalar; edit it by hand", n.Line)
	}
	if n.Anchor != "" || n.Style&yaml.TaggedStyle != 0 {
		return 0, 0, fmt.Errorf("the image on line %d has an anchor or a tag; edit it by hand", n.Line)
	}
	start, err := offsetOf(data, n.Line, n.Column)
	if err != nil {
		return 0, 0, err
	}
	lineEnd := len(data)
	if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
		lineEnd = start + i
	}
	rest := data[start:lineEnd]
	var length int
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		length = quotedLength(rest, '"')
	case n.Style&yaml.SingleQuotedStyle != 0:
		length = quotedLength(rest, '\'')
	default:
		if bytes.HasPrefix(rest, []byte(n.Value)) {
			length = len(n.Value)
		}
	}
	if length == 0 {
		return 0, 0, fmt.Errorf("the image on line %d spans several lines; edit it by hand", n.Line)
	}
	return start, start + length, nil
}

// offsetOf turns yaml.v3's 1-based line and column (counted in characters) into a byte offset.
func offsetOf(data []byte, line, col int) (int, error) {
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return 0, errors.New("line out of range")
		}
		off += i + 1
	}
	for c := 1; c < col; c++ {
		if off >= len(data) || data[off] == '\n' {
			return 0, errors.New("column out of range")
		}
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
	return off, nil
}

// quotedLength is the length of the quoted scalar at the start of s (0 when it does not close on the
// line). In double quotes a backslash escapes; in single quotes a doubled quote is one quote.
func quotedLength(s []byte, q byte) int {
	if len(s) == 0 || s[0] != q {
		return 0
	}
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i + 1
		}
	}
	return 0
}

// encodeScalar writes v in the given quoting style, falling back to double quotes when a plain scalar
// would not read back as the same string.
func encodeScalar(v string, style yaml.Style) string {
	switch {
	case style&yaml.SingleQuotedStyle != 0:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'"
	case style&yaml.DoubleQuotedStyle != 0 || !plainSafe(v):
		return strconv.Quote(v)
	}
	return v
}

// plainSafe reports whether v, written plain as a mapping value, reads back as the string v.
func plainSafe(v string) bool {
	if v == "" || strings.TrimSpace(v) != v || strings.ContainsAny(v, "\n#") || strings.Contains(v, ": ") {
		return false
	}
	var m map[string]any
	if err := yaml.Unmarshal([]byte("k: "+v+"\n"), &m); err != nil {
		return false
	}
	s, ok := m["k"].(string)
	return ok && s == v
}

// sameExcept reports whether the trees a and b are equal but for target (a node of a), whose value in b
// is value.
func sameExcept(a, b, target *yaml.Node, value string) bool {
	if a.Kind != b.Kind || a.Line != b.Line || len(a.Content) != len(b.Content) || a.Anchor != b.Anchor ||
		(a.Alias == nil) != (b.Alias == nil) {
		return false
	}
	if a == target {
		return b.Kind == yaml.ScalarNode && b.Value == value && b.ShortTag() == "!!str"
	}
	if a.Value != b.Value || a.ShortTag() != b.ShortTag() || a.Column != b.Column && a.Line != target.Line {
		return false
	}
	for i := range a.Content {
		if !sameExcept(a.Content[i], b.Content[i], target, value) {
			return false
		}
	}
	return true
}
