package catalog

import (
	"bytes"
	"reflect"
	"testing"
)

// lineByLineDocs is the document splitter as it was, reading every line (the oracle for yamlDocs, which
// jumps from one "---" line to the next).
func lineByLineDocs(data []byte, from int) (docs []yamlDoc, reached []int, bad bool) {
	start, i := from, from
	for i < len(data) {
		eol := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if eol >= 0 {
			next = i + eol + 1
		}
		line := data[i:next]
		if isSeparator(line) {
			rest := bytes.TrimSpace(line[3:])
			if len(rest) > 0 && rest[0] != '#' {
				return docs, append(reached, len(data)), true
			}
			if i > start {
				docs, reached, start = append(docs, newDoc(data, start, i)), append(reached, next), next
			}
		}
		i = next
	}
	if len(data) > start {
		docs, reached = append(docs, newDoc(data, start, len(data))), append(reached, len(data))
	}
	return docs, reached, false
}

// FuzzYAMLDocs: the same documents, the same read positions (which the loader releases memory by) and the
// same separator errors as reading line by line.
func FuzzYAMLDocs(f *testing.F) {
	for _, s := range []string{"", "---", "---\n", "a: 1\n---\nb: 2\n", "---\n---\n", "a\n--- # c\nb\n", "a\n---x\nb",
		"a: |\n  ---\n---\nb\n", "\n---\n", "a\r\n---\r\nb\r\n", "----\na\n", " ---\n---"} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, from int) {
		if from < 0 || from > len(data) {
			return
		}
		wantDocs, wantReached, wantBad := lineByLineDocs(data, from)
		var docs []yamlDoc
		var reached []int
		bad := false
		y := newYAMLDocs(data, from)
		for {
			d, ok, err := y.next()
			if err != nil {
				bad = true
				reached = append(reached, y.i)
				break
			}
			if !ok {
				break
			}
			docs, reached = append(docs, d), append(reached, y.i)
		}
		if !reflect.DeepEqual(docs, wantDocs) || !reflect.DeepEqual(reached, wantReached) || bad != wantBad {
			t.Fatalf("%q from %d: documents %v (read to %v, error %v), line by line %v (%v, %v)", data, from, docs, reached, bad, wantDocs, wantReached, wantBad)
		}
	})
}
