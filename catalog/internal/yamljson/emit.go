package yamljson

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// keyKind is the type go-yaml gives a mapping key. Keys of different kinds that print the same ("1" and
// 1, "true" and true) are different keys to go-yaml but the same to JSON: sigs.k8s.io/yaml then keeps
// whichever Go's map iteration gives last, so such mappings decline.
type keyKind uint8

const (
	kindString keyKind = iota
	kindBool
	kindInt
)

// entry is one `"key":value` of an open mapping: its key in p.keys and its bytes in p.out.
type entry struct {
	keyFrom, keyTo int
	from, to       int
	kind           keyKind
}

// sortEntries puts the entries of the mapping being closed (p.ents[mark:], written from p.out[start:])
// in encoding/json's order, sorted by key, keeping the last of equal keys as go-yaml's map does.
func (p *parser) sortEntries(start, mark int) {
	ents := p.ents[mark:]
	key := func(e entry) []byte { return p.keys[e.keyFrom:e.keyTo] }
	sorted := true
	for n := 1; n < len(ents); n++ {
		if bytes.Compare(key(ents[n-1]), key(ents[n])) >= 0 {
			sorted = false
			break
		}
	}
	if sorted {
		return
	}
	slices.SortStableFunc(ents, func(a, b entry) int { return bytes.Compare(key(a), key(b)) })
	p.swap = append(p.swap[:0], p.out[start:]...)
	p.out = p.out[:start]
	for n, e := range ents {
		if n+1 < len(ents) && bytes.Equal(key(e), key(ents[n+1])) {
			if e.kind != ents[n+1].kind {
				decline()
			}
			continue // a later duplicate replaces it
		}
		if len(p.out) > start {
			p.out = append(p.out, ',')
		}
		p.out = append(p.out, p.swap[e.from-start:e.to-start]...)
	}
}

// appendKey appends the JSON name of the plain key raw to keys: its text for a string, "true"/"false" for
// a boolean, the decimal number for an integer. Keys sigs.k8s.io/yaml refuses (null, a uint64 beyond
// int64) or prints by float32 rounding (floats), and merge keys, decline.
func appendKey(keys []byte, raw []byte) ([]byte, keyKind) {
	if string(raw) == "<<" {
		decline()
	}
	r := resolve(raw)
	switch r.tag {
	case tagString:
		return append(keys, raw...), kindString
	case tagBool:
		return strconv.AppendBool(keys, r.i != 0), kindBool
	case tagInt:
		return strconv.AppendInt(keys, r.i, 10), kindInt
	}
	decline()
	return nil, 0
}

// plainValue writes the JSON of the plain scalar s.
func (p *parser) plainValue(s []byte) {
	r := resolve(s)
	switch r.tag {
	case tagString:
		p.appendString(s)
	case tagNull:
		p.out = append(p.out, "null"...)
	case tagBool:
		p.out = strconv.AppendBool(p.out, r.i != 0)
	case tagInt:
		p.out = strconv.AppendInt(p.out, r.i, 10)
	case tagUint:
		p.out = strconv.AppendUint(p.out, r.u, 10)
	case tagFloat:
		p.out = appendFloat(p.out, r.f)
	default:
		decline()
	}
}

type tag uint8

const (
	tagString tag = iota
	tagNull
	tagBool
	tagInt
	tagUint
	tagFloat
	tagOther // .nan, .inf: encoding/json refuses them
)

type resolved struct {
	tag tag
	i   int64
	u   uint64
	f   float64
}

// resolve is go.yaml.in/yaml/v2's resolve for an untagged plain scalar decoded into interface{}. Its
// timestamp step is left out: a scalar it accepts starts with four digits and "-", which no integer or
// float below accepts either, and decoding into interface{} keeps timestamps as their text.
func resolve(s []byte) resolved {
	if len(s) == 0 {
		return resolved{tag: tagNull}
	}
	hint := byte(0)
	switch c := s[0]; {
	case c == '+' || c == '-':
		hint = 'S'
	case '0' <= c && c <= '9':
		hint = 'D'
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		hint = 'M'
	case c == '.':
		hint = '.'
	}
	if hint == 0 {
		return resolved{}
	}
	switch string(s) {
	case "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return resolved{tag: tagBool, i: 1}
	case "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return resolved{tag: tagBool}
	case "~", "null", "Null", "NULL":
		return resolved{tag: tagNull}
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF":
		return resolved{tag: tagOther}
	}
	switch hint {
	case '.':
		if f, err := strconv.ParseFloat(string(s), 64); err == nil {
			return resolved{tag: tagFloat, f: f}
		}
	case 'D', 'S':
		if !numberBytes(s) {
			return resolved{} // a version, a date, a name: no parse below accepts it
		}
		plain := strings.ReplaceAll(string(s), "_", "")
		if v, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return resolved{tag: tagInt, i: v}
		}
		if v, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return resolved{tag: tagUint, u: v}
		}
		if yamlStyleFloat(plain) {
			if f, err := strconv.ParseFloat(plain, 64); err == nil {
				return resolved{tag: tagFloat, f: f}
			}
		}
		if strings.HasPrefix(plain, "0b") {
			if v, err := strconv.ParseInt(plain[2:], 2, 64); err == nil {
				return resolved{tag: tagInt, i: v}
			}
			if v, err := strconv.ParseUint(plain[2:], 2, 64); err == nil {
				return resolved{tag: tagUint, u: v}
			}
		} else if strings.HasPrefix(plain, "-0b") {
			if v, err := strconv.ParseInt("-"+plain[3:], 2, 64); err == nil {
				return resolved{tag: tagInt, i: v}
			}
		}
	}
	return resolved{}
}

// numberBytes reports whether s could be one of the numbers resolve's 'D' and 'S' cases parse: those
// accept signs, digits, underscores, at most one '.', and letters only for base prefixes, hexadecimal digits
// and exponents. A scalar with a second '.' (a version), a ':' (a time) or any other byte is text; the
// parses would say so too, at the cost of two errors and a regular expression for each.
func numberBytes(s []byte) bool {
	dots := 0
	for _, c := range s {
		switch {
		case '0' <= c && c <= '9', c == '_', c == '+', c == '-':
		case c == '.':
			if dots++; dots > 1 {
				return false
			}
		case 'a' <= c && c <= 'f', 'A' <= c && c <= 'F', c == 'x', c == 'X', c == 'o', c == 'O':
		default:
			return false
		}
	}
	return true
}

// yamlStyleFloat is go-yaml v2's float syntax, ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$.
func yamlStyleFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	} else {
		if digits() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			digits()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// appendFloat is encoding/json's float64 encoding; NaN and infinities, which it refuses, decline.
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		decline()
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendString writes the string value s, or "" inside an elided value (elide.go).
func (p *parser) appendString(s []byte) {
	if p.elide > 0 {
		p.out = append(p.out, '"', '"')
		return
	}
	p.out = appendString(p.out, s)
}

// appendString is encoding/json's string encoding with HTML escaping, as json.Marshal writes it.
func appendString(dst, src []byte) []byte {
	dst, _ = appendEscaped(append(dst, '"'), src, false)
	return append(dst, '"')
}

// appendEscaped appends src as the inside of a JSON string (appendString's escaping, without the quotes).
// With toLineFeed it stops at src's first line feed, which it does not write, and returns its offset;
// else it writes all of src and returns len(src).
func appendEscaped(dst, src []byte, toLineFeed bool) ([]byte, int) {
	const hex = "0123456789abcdef"
	start, i := 0, 0
	for {
		// Eight bytes at a time to the first byte encoding/json may not write as is.
		for i+8 <= len(src) {
			if m := escapeMask8(binary.LittleEndian.Uint64(src[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(src) {
			break
		}
		b := src[i]
		if htmlSafeSet[b] { // a byte of the last word, or 0x7f, which the mask leaves out
			i++
			continue
		}
		if b < utf8.RuneSelf {
			if b == '\n' && toLineFeed {
				return append(dst, src[start:i]...), i
			}
			dst = append(dst, src[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRune(src[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(dst, src[start:]...), len(src)
}

// escapeMask8's lowest set bit is the high bit of the first byte of w that encoding/json, with HTML escaping
// on, may not write as it is; it is zero when it writes all eight as they are. Such a byte is below
// 0x20, '"' or '&' (0x22, 0x26: equal once bit 0x04 is set), '<' or '>' (0x3c, 0x3e: bit 0x02), '\\', or
// from 0x80 up (a byte of a multi-byte character: the rune decides). 0x7f, written as is, is not flagged.
// Each term flags its first such byte exactly: a borrow only runs upwards from it, so only higher bits can
// be wrong, and the lowest bit of their union is the first byte of any.
func escapeMask8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w-0x20*ones)&^w&highs | w&highs | zeroBytes8((w|0x04*ones)^0x26*ones) |
		zeroBytes8((w|0x02*ones)^0x3e*ones) | zeroBytes8(w^'\\'*ones)
}

// zeroBytes8 has the high bit of w's first zero byte set (and maybe higher ones: see escapeMask8).
func zeroBytes8(w uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w - ones) &^ w & highs
}

// htmlSafeSet holds the ASCII bytes encoding/json writes as is with HTML escaping on; it has an entry for
// every byte value (false from utf8.RuneSelf up) so that indexing it needs no bounds check.
var htmlSafeSet = func() (set [256]bool) {
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		set[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return set
}()
