// Package scan is the catalog loader's JSON engine: a validating, allocation-free scanner over JSON text
// (this file) and a reflection-driven decoder over it (decode.go) that accept and reject exactly what
// encoding/json, and so opm, accepts and rejects, and report byte offsets. Package catalog holds the model
// and drives it.
package scan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The scanner accepts exactly the grammar encoding/json accepts (RFC 8259), so a blob it takes is a blob
// opm takes, and it reports the byte offset of the first error.

// SyntaxError is a JSON grammar error at a byte offset of the scanned text.
type SyntaxError struct {
	Off int
	Msg string
}

func (e *SyntaxError) Error() string { return e.Msg }

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

func SkipSpace(data []byte, i int) int {
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

func ErrAt(data []byte, i int, context string) error {
	if i >= len(data) {
		return &SyntaxError{Off: i, Msg: "unexpected end of JSON input " + context}
	}
	return &SyntaxError{Off: i, Msg: fmt.Sprintf("invalid character %s %s", describe(data, i), context)}
}

// ScanString validates the string starting at data[i] == '"' and returns the offset after its closing quote
// and whether it holds escapes.
func ScanString(data []byte, i int) (end int, escaped bool, err error) {
	i++ // opening quote
	for {
		// Eight bytes at a time while none of them is a quote, a backslash or a control character, then
		// straight to the first that is (the lowest bit of the masks is exact: see hasLess).
		for i+8 <= len(data) {
			x := binary.LittleEndian.Uint64(data[i:])
			if m := hasLess(x, 0x20) | hasByte(x, '"') | hasByte(x, '\\'); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(data) && !strStop[data[i]] {
			i++
		}
		if i >= len(data) {
			return i, escaped, ErrAt(data, i, "in string literal")
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(data) {
				return i + 1, escaped, ErrAt(data, i+1, "in string escape code")
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				for k := 2; k < 6; k++ {
					if i+k >= len(data) || !isHex(data[i+k]) {
						return i + k, escaped, ErrAt(data, i+k, "in \\u hexadecimal character escape")
					}
				}
				i += 6
			default:
				return i + 1, escaped, ErrAt(data, i+1, "in string escape code")
			}
		default:
			return i, escaped, ErrAt(data, i, "in string literal")
		}
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasLess is non-zero when a byte of x is below n (n <= 128). Its lowest set bit is the high bit of the
// first such byte: a borrow only runs upwards from a byte below n, so only higher bits can be wrong.
func hasLess(x, n uint64) uint64 { return (x - lsb*n) & ^x & msb }

// hasByte is non-zero when a byte of x equals b.
func hasByte(x uint64, b byte) uint64 { return hasLess(x^(lsb*uint64(b)), 1) }

// FastSkip finds the end of the value at data[i] without validating it: it only tracks strings and
// nesting. Callers validate the value afterwards (the typed decode or SkipValue does).
func FastSkip(data []byte, i int) (int, error) {
	end, _, err := fastSkipDepth(data, i)
	return end, err
}

// fastSkipDepth is FastSkip, also reporting the deepest nesting it went through.
func fastSkipDepth(data []byte, i int) (end, deepest int, err error) {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			j := i + 1
			for {
				k := bytes.IndexByte(data[j:], '"')
				if k < 0 {
					return len(data), deepest, ErrAt(data, len(data), "in string literal")
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
				return i, deepest, nil
			}
			continue
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
			if depth <= 0 {
				return i + 1, deepest, nil
			}
		default:
			if depth == 0 {
				// a scalar: up to the next delimiter
				for i < len(data) && !isSpace(data[i]) && data[i] != ',' && data[i] != '}' && data[i] != ']' && data[i] != ':' {
					i++
				}
				return i, deepest, nil
			}
		}
		i++
	}
	return i, deepest, ErrAt(data, i, "looking for end of value")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// StringValue returns the decoded value of the string literal data[start:end] (quotes included).
func StringValue(data []byte, start, end int, escaped bool) string {
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

// ScanNumber validates a JSON number at data[i].
func ScanNumber(data []byte, i int) (int, error) {
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
		return i, ErrAt(data, i, "in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return i, ErrAt(data, i, "after decimal point in numeric literal")
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
			return i, ErrAt(data, i, "in exponent of numeric literal")
		}
		for i < len(data) && '0' <= data[i] && data[i] <= '9' {
			i++
		}
	}
	return i, nil
}

func ScanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(data) || data[i+k] != lit[k] {
			return i + k, ErrAt(data, i+k, "in literal "+lit+" (expecting "+strconv.Quote(lit[k:k+1])+")")
		}
	}
	return i + len(lit), nil
}

// MaxDepth bounds nesting like encoding/json does (10000), so hostile input cannot exhaust the stack.
const MaxDepth = 10000

// SkipValue validates the value starting at data[i] (no leading space) and returns the offset after it.
func SkipValue(data []byte, i int, depth int) (int, error) {
	if i >= len(data) {
		return i, ErrAt(data, i, "looking for beginning of value")
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := ScanString(data, i)
		return end, err
	case c == '{':
		if depth >= MaxDepth {
			return i, &SyntaxError{Off: i, Msg: "exceeded max depth"}
		}
		return skipObject(data, i, depth)
	case c == '[':
		if depth >= MaxDepth {
			return i, &SyntaxError{Off: i, Msg: "exceeded max depth"}
		}
		return skipArray(data, i, depth)
	case c == '-' || '0' <= c && c <= '9':
		return ScanNumber(data, i)
	case c == 't':
		return ScanLiteral(data, i, "true")
	case c == 'f':
		return ScanLiteral(data, i, "false")
	case c == 'n':
		return ScanLiteral(data, i, "null")
	default:
		return i, ErrAt(data, i, "looking for beginning of value")
	}
}

func skipObject(data []byte, i int, depth int) (int, error) {
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, ErrAt(data, i, "looking for beginning of object key string")
		}
		ke, _, err := ScanString(data, i)
		if err != nil {
			return ke, err
		}
		i = SkipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return i, ErrAt(data, i, "after object key")
		}
		i = SkipSpace(data, i+1)
		if i, err = SkipValue(data, i, depth+1); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return i + 1, nil
		}
		return i, ErrAt(data, i, "after object key:value pair")
	}
}

func skipArray(data []byte, i int, depth int) (int, error) {
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if i, err = SkipValue(data, i, depth+1); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			return i + 1, nil
		}
		return i, ErrAt(data, i, "after array element")
	}
}

// IterObject walks the object at data[i] == '{'. For each member it calls fn with the key literal's span,
// whether the key has escapes, and the offset of the value; fn returns the offset after the value.
func IterObject(data []byte, i int, fn func(keyStart, keyEnd int, escaped bool, val int) (int, error)) (int, error) {
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return i, ErrAt(data, i, "looking for beginning of object key string")
		}
		ks := i
		ke, esc, err := ScanString(data, i)
		if err != nil {
			return ke, err
		}
		i = SkipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return i, ErrAt(data, i, "after object key")
		}
		i = SkipSpace(data, i+1)
		if i, err = fn(ks, ke, esc, i); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == '}' {
			return i + 1, nil
		}
		return i, ErrAt(data, i, "after object key:value pair")
	}
}

// IterArray walks the array at data[i] == '['; fn gets each element's index and offset.
func IterArray(data []byte, i int, fn func(idx int, val int) (int, error)) (int, error) {
	i = SkipSpace(data, i+1)
	if i < len(data) && data[i] == ']' {
		return i + 1, nil
	}
	for n := 0; ; n++ {
		var err error
		if i, err = fn(n, i); err != nil {
			return i, err
		}
		i = SkipSpace(data, i)
		if i < len(data) && data[i] == ',' {
			i = SkipSpace(data, i+1)
			continue
		}
		if i < len(data) && data[i] == ']' {
			return i + 1, nil
		}
		return i, ErrAt(data, i, "after array element")
	}
}

// KindAt names the JSON kind of the value at data[i], in encoding/json's words.
func KindAt(data []byte, i int) string {
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
