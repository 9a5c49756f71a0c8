package catalog

import (
	"bytes"
	"strconv"

	"github.com/catalogbot/catalogbot/catalog/internal/scan"
	"github.com/catalogbot/catalogbot/catalog/internal/yamljson"
	"sigs.k8s.io/yaml"
)

// Catalogs rendered by opm write each olm.bundle.object as a line `data: <base64>` of tens to hundreds of
// kilobytes. sigs.k8s.io/yaml reads a plain scalar byte by byte into a growing slice, then copies it into
// a string, a map and the JSON output: on community-operators-prod-v4.16 that is three quarters of the
// load's allocations and most of its time. yamlToJSON hands the converter a short stand-in for each such
// scalar instead and puts the original bytes back into the JSON it returns.
//
// The stand-in converts exactly as the scalar does: both are plain scalars of base64 characters (no JSON
// escaping, no YAML indicator) holding a letter no YAML 1.1 number, boolean, null or timestamp can hold, so
// both resolve to strings and appear verbatim between quotes in the JSON; whatever the line's context (a
// mapping value, a line of a literal or quoted scalar), the stand-in's text stands where the scalar's did.
// A scalar is only replaced when it ends its line and the next non-blank line is not indented more than its
// key, so it is not the first line of a multi-line plain scalar. When the document does not convert, it
// is converted again as written, so errors are the converter's own.

// minStandIn is the shortest scalar worth replacing.
const minStandIn = 1024

// standInPrefix starts every stand-in; a document that contains it is converted as written.
var standInPrefix = []byte("Zcatalogbotq7x")

// yamlToJSON converts a document as sigs.k8s.io/yaml.YAMLToJSON does. Documents in the subset opm writes
// are converted by yamljson, without go-yaml's node tree (on community-operators-prod-v4.20 go-yaml was
// 85% of the load's time and 90% of its allocations); the others, and every document with an error, go
// through sigs.k8s.io/yaml, with stand-ins for long base64 scalars. The JSON is appended to dst[:0]
// when yamljson converts the document. text is what the document's split learnt of it (docText). With
// elide, the values of properties of that type are written without their strings when yamljson converts
// the document (yamljson.Options), and elided says whether any was.
func yamlToJSON(dst, doc []byte, text docText, elide string) (js []byte, elided bool, err error) {
	convert := yamljson.AppendConvert
	if text == textPlain {
		convert = yamljson.AppendConvertScanned
	}
	if text != textNotPlain {
		if js, elided, ok := convert(dst[:0], doc, yamljson.Options{ElideType: elide}); ok {
			return js, elided, nil
		}
	}
	js, err = yamlToJSONSlow(doc)
	return js, false, err
}

// yamlToJSONSlow converts a document yamljson declines with sigs.k8s.io/yaml.
func yamlToJSONSlow(doc []byte) ([]byte, error) {
	if len(doc) < minStandIn || bytes.Contains(doc, standInPrefix) {
		return yaml.YAMLToJSON(doc)
	}
	var (
		out      []byte   // doc with stand-ins, built only once a scalar is replaced
		scalars  [][]byte // the replaced scalars, in order
		copied   int      // doc[:copied] is in out
		lineFrom int
	)
	for lineFrom < len(doc) {
		eol := bytes.IndexByte(doc[lineFrom:], '\n')
		lineEnd := len(doc)
		if eol >= 0 {
			lineEnd = lineFrom + eol
		}
		if s, e, ok := longScalar(doc, lineFrom, lineEnd); ok {
			if out == nil {
				out = make([]byte, 0, len(doc)/2)
			}
			out = append(out, doc[copied:s]...)
			out = append(out, standInPrefix...)
			out = strconv.AppendInt(out, int64(len(scalars)), 10)
			out = append(out, 'Z')
			scalars = append(scalars, doc[s:e])
			copied = e
		}
		lineFrom = lineEnd + 1
	}
	if scalars == nil {
		return yaml.YAMLToJSON(doc)
	}
	out = append(out, doc[copied:]...)
	js, err := yaml.YAMLToJSON(out)
	if err != nil {
		return yaml.YAMLToJSON(doc)
	}
	return restoreScalars(js, scalars)
}

// restoreScalars replaces each stand-in in js by its scalar's bytes. It converts the document again as
// written (ok false) when a stand-in is not where it should be.
func restoreScalars(js []byte, scalars [][]byte) ([]byte, error) {
	size := len(js)
	for _, s := range scalars {
		size += len(s)
	}
	res := make([]byte, 0, size)
	for {
		k := bytes.Index(js, standInPrefix)
		if k < 0 {
			return append(res, js...), nil
		}
		res = append(res, js[:k]...)
		js = js[k+len(standInPrefix):]
		z := bytes.IndexByte(js, 'Z')
		n, err := strconv.Atoi(string(js[:max(z, 0)]))
		if z < 0 || err != nil || n < 0 || n >= len(scalars) {
			// not a stand-in of ours: impossible, as the document did not contain the prefix
			return nil, errStandIn
		}
		res = append(res, scalars[n]...)
		js = js[z+1:]
	}
}

var errStandIn = &scan.SyntaxError{Msg: "internal error: YAML stand-in not found in the converted document"}

// longScalar finds `KEY: SCALAR` (optionally after "- ") on the line doc[from:end] with SCALAR a long run of
// base64 characters ending the line, followed by no more-indented line; it returns SCALAR's range.
func longScalar(doc []byte, from, end int) (s, e int, ok bool) {
	if end-from < minStandIn {
		return 0, 0, false
	}
	i := from
	for i < end && doc[i] == ' ' {
		i++
	}
	if i+1 < end && doc[i] == '-' && doc[i+1] == ' ' {
		i += 2
		for i < end && doc[i] == ' ' {
			i++
		}
	}
	keyCol := i - from
	k := i
	for k < end && (isAlnum(doc[k]) || doc[k] == '_') {
		k++
	}
	if k == i || k+2 > end || doc[k] != ':' || doc[k+1] != ' ' {
		return 0, 0, false
	}
	s = k + 2
	if end-s < minStandIn {
		return 0, 0, false
	}
	letter := false
	for j := s; j < end; j++ {
		c := doc[j]
		switch {
		case isAlnum(c) || c == '+' || c == '/':
			letter = letter || isStringOnly(c)
		case c == '=' && j > s:
			// padding: only '=' may follow
			for ; j < end; j++ {
				if doc[j] != '=' {
					return 0, 0, false
				}
			}
		default:
			return 0, 0, false
		}
	}
	if !letter {
		return 0, 0, false
	}
	// the next non-blank line must not continue the scalar
	for n := end + 1; n < len(doc); {
		eol := bytes.IndexByte(doc[n:], '\n')
		lineEnd := len(doc)
		if eol >= 0 {
			lineEnd = n + eol
		}
		ind := 0
		for n+ind < lineEnd && doc[n+ind] == ' ' {
			ind++
		}
		if n+ind < lineEnd {
			if doc[n+ind] == '\t' || doc[n+ind] == '\r' || ind > keyCol {
				return 0, 0, false
			}
			break
		}
		n = lineEnd + 1
	}
	return s, end, true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isStringOnly reports whether c appears in no YAML 1.1 number (decimal, 0x, 0o, 0b, sexagesimal, float
// with exponent, .inf, .nan), boolean (y, yes, on, true, n, no, off, false), null or timestamp.
func isStringOnly(c byte) bool {
	switch {
	case c == '/':
		return true
	case 'g' <= c && c <= 'z' || 'G' <= c && c <= 'Z':
		switch c {
		case 'o', 'O', 'x', 'X', 'y', 'Y', 'n', 'N', 's', 'S', 'r', 'R', 'u', 'U', 'l', 'L', 't', 'T', 'i', 'I', 'z', 'Z':
			return false
		}
		return true
	}
	return false
}
