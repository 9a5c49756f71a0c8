package catalog

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// The loader's JSON scanner: a validating, allocation-free walker over JSON text that the typed decoders
// (decode.go) drive. It accepts exactly the grammar encoding/json accepts (RFC 8259), so a blob it takes is
// a blob opm takes, and it reports the byte offset of the first error.

// syntaxError is a JSON grammar error at a byte offset of the scanned text.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return e.msg }

// strFlags classifies bytes inside a string: 1 = must stop (quote, backslash, control character).
var strStop = func() (t [256]bool) {
	for i := 0; i < 0x20; i++ {
		t[i] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func describe(data []byte, i int) string {
	if i >= len(data) {
		return "end of input"
	}
	c := data[i]
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte %#02x", c)
	}
	return strconv.Quote(string(c))
}

func errAt(data []byte, i int, context string) error {
	if i >= len(data) {
		return &syntaxError{off: i, msg: "unexpected end of JSON input " + context}
	}
	return &syntaxError{off: i, msg: fmt.Sprintf("invalid character %s %s", describe(data, i), context)}
}

// scanString validates the string starting at data[i] == '"' and returns the offset after its closing quote
// and whether it holds escapes.
func scanString(data []byte, i int) (end int, escaped bool, err error) {
	i++ // opening quote
	for {
		// Eight bytes at a time while none of them is a quote, a backslash or a control character.
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			if hasLess(x, 0x20)|hasByte(x, '"')|hasByte(x, '\\') != 0 {
				break
			}
			i += 8
		}
		for i < len(data) && !strStop[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, escaped, errAt(data, i, "in string literal")
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				return i + 1, escaped, errAt(data, i+1, "in string escape code")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(data) || !isHex(data[i+k]) {
						return i + k, escaped, errAt(data, i+k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, escaped, errAt(data, i+1, "in string escape code")
			}
		default:
			return i, escaped, errAt(data, i, "in string literal")
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasLess is non-zero when a byte of x is below n (n <= 128).
func hasLess(x, n uint64) uint64 { return (x - lsb*n) & ^x & msb }

// hasByte is non-zero when a byte of x equals b.
func hasByte(x uint64, b byte) uint64 { return hasLess(x^(lsb*uint64(b)), 1) }

// fastSkip finds the end of the value at data[i] without validating it: it only tracks strings and
// nesting. Callers validate the value afterwards (the typed decode or skipValue does).
func fastSkip(data []byte, i int) (int, error) {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			j := i + 1
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					return len(data), errAt(data, len(data), "in string literal")
				}
				j += k
				bs := 0
				for b := j - 1; b > i && data[b] == '\\'; b-- {
					bs++
				}
				j++
				if bs%2 == 0 {
					break
				}
			}
			i = j
			if depth == 0 {
				return i, nil
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth <= 0 {
				return i + 1, nil
			}
		default:
			if depth == 0 {
				// a scalar: up to the next delimiter
				for i < len(data) && !isSpace(data[i]) && data[i] != ',' && data[i] != '}' && data[i] != ']' && data[i] != ':' {
					i++
				}
				return i, nil
			}
		}
		i++
	}
	return i, errAt(data, i, "looking for end of value")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// stringValue returns the decoded value of the string literal data[start:end] (quotes included).
func stringValue(data []byte, start, end int, escaped bool) string {
	raw := data[start+1 : end-1]
	if !escaped && utf8.Valid(raw) {
		return string(raw)
	}
	var s string
	// The literal is already validated; encoding/json's unquoting (with its U+FFFD replacement of invalid
	// UTF-8 and surrogate handling) is the reference behaviour.
	if err := json.Unmarshal(data[start:end], &s); err != nil {
		return string(raw)
	}
	return s
}

// scanNumber validates a JSON number at data[i].
func scanNumber(data []byte, i int) (int, error) {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	default:
		return i, errAt(data, i, "in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return i, errAt(data, i, "after decimal point in numeric literal")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return i, errAt(data, i, "in exponent of numeric literal")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	return i, nil
}

func scanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(data) || data[i+k] != lit[k] {
			return i + k, errAt(data, i+k, "in literal "+lit+" (expecting "+strconv.Quote(lit[k:k+1])+")")
		}
	}
	return i + len(lit), nil
}

// maxDepth bounds nesting like encoding/json does (10000), so hostile input cannot exhaust the stack.
const maxDepth = 10000

// skipValue validates the value starting at data[i] (no leading space) and returns the offset after it.
func skipValue(data []byte, i int, depth int) (int, error) {
	if i >= len(data) {
		return i, errAt(data, i, "looking for beginning of value")
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := scanString(data, i)
		return end, err
	case c == '{':
		if depth >= maxDepth {
			return i, &syntaxError{off: i, msg: "exceeded max depth"}
		}
		return skipObject(data, i, depth)
	case c == '[':
		if depth >= maxDepth {
			return i, &syntaxError{off: i, msg: "exceeded max depth"}
		}
		return skipArray(data, i, depth)
	case c == '-' || '0' <= c && c <= '9':
		return scanNumber(data, i)
	case c == 't':
		return scanLiteral(data, i, "true")
	case c == 'f':
		return scanLiteral(data, i, "false")
	case c == 'n':
		return scanLiteral(data, i, "null")
	default:
		return i, errAt(data, i, "looking for beginning of value")
	}
}

func skipObject(data []byte, i int, depth int) (int, error) {
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, errAt(data, i, "looking for beginning of object key string")
		}
		ke, _, err := scanString(data, i)
		if err != nil {
			return ke, err
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return i, errAt(data, i, "after object key")
		}
		i = skipSpace(data, i+1)
		if i, err = skipValue(data, i, depth+1); err != nil {
			return i, err
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return i + 1, nil
		}
		return i, errAt(data, i, "after object key:value pair")
	}
}

func skipArray(data []byte, i int, depth int) (int, error) {
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = skipValue(data, i, depth+1); err != nil {
			return i, err
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			return i + 1, nil
		}
		return i, errAt(data, i, "after array element")
	}
}

// iterObject walks the object at data[i] == '{'. For each member it calls fn with the key literal's span,
// whether the key has escapes, and the offset of the value; fn returns the offset after the value.
func iterObject(data []byte, i int, fn func(keyStart, keyEnd int, escaped bool, val int) (int, error)) (int, error) {
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, errAt(data, i, "looking for beginning of object key string")
		}
		ks := i
		ke, esc, err := scanString(data, i)
		if err != nil {
			return ke, err
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return i, errAt(data, i, "after object key")
		}
		i = skipSpace(data, i+1)
		if i, err = fn(ks, ke, esc, i); err != nil {
			return i, err
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return i + 1, nil
		}
		return i, errAt(data, i, "after object key:value pair")
	}
}

// iterArray walks the array at data[i] == '['; fn gets each element's index and offset.
func iterArray(data []byte, i int, fn func(idx int, val int) (int, error)) (int, error) {
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		var err error
		if i, err = fn(n, i); err != nil {
			return i, err
		}
		i = skipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			return i + 1, nil
		}
		return i, errAt(data, i, "after array element")
	}
}

// kindAt names the JSON kind of the value at data[i], in encoding/json's words.
func kindAt(data []byte, i int) string {
	if i >= len(data) {
		return "nothing"
	}
	switch data[i] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	default:
		return "number"
	}
}
