package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// sniffSize is how far opm's decoder looks for a '{' to decide that a file is JSON.
const sniffSize = 30

// decodeFirst decodes the first YAML or JSON document of data into v with the decoder opm uses for every
// bundle file (a leading '{' within the first 30 bytes means JSON, else YAML converted to JSON).
func decodeFirst(data []byte, v any) error {
	return k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), sniffSize).Decode(v)
}

// decodeObject decodes the first document of data as a Kubernetes object, as opm does, and reports
// whether another document follows it (opm ignores it).
func decodeObject(data []byte) (obj *object, more bool, err error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), sniffSize)
	obj = &object{}
	if err := dec.Decode(obj); err != nil {
		return nil, false, err
	}
	extra := map[string]any{}
	return obj, dec.Decode(&extra) == nil, nil
}

// firstDocument decodes the first document of data generically: it fails only on syntax. It returns the
// value (nil for an empty or comment-only document) and whether a non-empty document follows.
func firstDocument(data []byte) (first any, laterDocs bool, err error) {
	dec := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), sniffSize)
	if err := dec.Decode(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		return nil, false, syntaxError(data, err)
	}
	for {
		var next any
		if err := dec.Decode(&next); err != nil {
			return first, false, nil
		}
		if next != nil {
			return first, true, nil
		}
	}
}

var yamlLineRE = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): (.*)$`)

// syntaxError turns a decoder error into "line N: what is wrong" where the decoder says where. The first
// document always starts on the file's first line (opm's YAML reader keeps a leading "---" in it), so
// the parser's line numbers are the file's.
func syntaxError(data []byte, err error) error {
	var js k8syaml.JSONSyntaxError
	if errors.As(err, &js) {
		line, col := lineCol(data, js.Offset)
		return fmt.Errorf("line %d, column %d: invalid JSON: %s", line, col, js.Err)
	}
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		n, convErr := strconv.Atoi(m[1])
		if convErr == nil {
			return fmt.Errorf("line %d: invalid YAML: %s", n, m[2])
		}
	}
	return fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(msg, "error converting YAML to JSON: "))
}

func lineCol(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	before := data[:offset]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(offset) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// hasDataExt says whether a file name promises YAML or JSON content; such files must parse.
func hasDataExt(name string) bool {
	lower := strings.ToLower(name)
	for _, ext := range []string{".yaml", ".yml", ".json"} {
		if strings.HasSuffix(lower, ext) {
			return true
		}
	}
	return false
}
