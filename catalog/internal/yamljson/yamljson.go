// Package yamljson converts one YAML document to the JSON sigs.k8s.io/yaml.YAMLToJSON returns for it,
// without building a node tree, for the block-style subset opm and go-yaml write; anything else it
// declines, so the caller converts that document with sigs.k8s.io/yaml and its errors stay that
// converter's own.
//
// For every document it accepts, the JSON is byte for byte what YAMLToJSON returns (go.yaml.in/yaml/v2's
// scanner and YAML 1.1 resolution, then encoding/json's sorted keys and escaping); a differential test
// over the shared real data and a fuzz test hold it to that. It accepts: an optional leading "---" line,
// comments, block mappings with plain or quoted single-line keys, block sequences (indented, indentless and
// compact), plain, single- and double-quoted scalars over one or several lines, literal and folded block
// scalars (with chomping and indentation indicators), and the empty flow collections {} and []. It declines tabs,
// carriage returns, byte order marks, Unicode line separators, anchors, aliases, tags, merge keys,
// directives, other flow collections, explicit keys, floats or nulls as keys, values encoding/json refuses
// (.nan, .inf), nesting deeper than maxDepth, and any layout it cannot place with certainty.
package yamljson

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"slices"
	"sync"
)

// maxDepth bounds nesting (go-yaml refuses more than 10,000 levels; recursion here stays small).
const maxDepth = 500

// errDecline unwinds the parser when the document is outside the subset.
var errDecline = errors.New("yamljson: outside the handled subset")

// Convert returns the JSON sigs.k8s.io/yaml.YAMLToJSON returns for doc, and ok false when doc is outside
// the subset this package handles (including every document YAMLToJSON refuses).
func Convert(doc []byte) (js []byte, ok bool) {
	js, _, ok = AppendConvert(nil, doc, Options{})
	return js, ok
}

// AppendConvert appends to dst the JSON Convert returns for doc (ok false: dst as given, doc declined),
// as opts says (elided: see AppendConvertScanned). The result is the caller's: passing it back as dst for
// the next document reuses its memory.
func AppendConvert(dst, doc []byte, opts Options) (js []byte, elided, ok bool) {
	if !plainText(doc) {
		return dst, false, false
	}
	return AppendConvertScanned(dst, doc, opts)
}

// AppendConvertScanned is AppendConvert for a document ScanDocument found plain (doc is data[:end]): it
// does not read the text again for that. With opts.ElideType, elided says whether it wrote any value
// without its strings (elide.go).
func AppendConvertScanned(dst, doc []byte, opts Options) (js []byte, elided, ok bool) {
	p := parsers.Get().(*parser)
	defer p.release()
	p.doc, p.pos, p.depth = doc, 0, 0
	p.lineFrom, p.lineTo = 1, 0 // no line yet
	p.elideFor(opts.ElideType)
	p.out = dst
	if free := cap(dst) - len(dst); free < len(doc) {
		p.out = slices.Grow(dst, jsonSizeHint(len(doc)))
	}
	err := p.document()
	js, p.out = p.out, nil // the caller's memory, never the pool's
	if err != nil {
		return dst, false, false
	}
	return js, p.elided > 0, true
}

// jsonSizeHint is the room the JSON of a YAML document of n bytes is given at once when dst has less
// than n bytes free: a block-style document's JSON is its text less the indentation, plus quotes and
// escapes, 0.84 to 1.06 times every document of 4 kB or more of community-operators-prod v4.16, v4.18,
// v4.20, v4.21 and v4.22 (up to 1.14 for smaller ones, which then grow once more). Given at once, a
// document of a megabyte costs one buffer of its size, not the chain of ever larger ones append allocates
// and copies on the way (it grows a large slice by a quarter at a time: 4.1 MB for 0.74 MB of JSON).
func jsonSizeHint(n int) int { return n + n/8 }

// keepBuffer is the largest scratch buffer a pooled parser keeps: a typical document's size (v4.20's
// largest is 190 kB), so the pool never holds a large document's worth of memory.
const keepBuffer = 256 << 10

// parsers keeps the scratch buffers of finished conversions for the next ones.
var parsers = sync.Pool{New: func() any { return new(parser) }}

// release returns p to the pool without the document, and without a buffer grown past what a typical
// document needs.
func (p *parser) release() {
	p.doc = nil
	p.ents, p.keys = p.ents[:0], p.keys[:0]
	p.out = nil // the caller's (AppendConvert)
	for _, b := range []*[]byte{&p.tmp, &p.swap} {
		if cap(*b) > keepBuffer {
			*b = nil
		}
		*b = (*b)[:0]
	}
	parsers.Put(p)
}

// plainText reports whether doc holds only what the parser reads as go-yaml does: printable ASCII, line
// feeds, and UTF-8 characters go-yaml allows that are neither line breaks (U+0085, U+2028, U+2029) nor a
// byte order mark. It also refuses directives and document markers ("..." at the start of a line, or
// "---" there after the first line).
func plainText(doc []byte) bool {
	end, plain := ScanDocument(doc)
	return plain && end == len(doc)
}

// ScanDocument reads the YAML stream data as plainText reads a document, up to its first line after the
// first that starts with "---", where a Kubernetes reader ends the document (the loader's split): it
// returns that line's offset, or len(data) when there is none, and plain true when data[:end] is a
// document plainText accepts, which AppendConvertScanned then converts without reading it again. When
// that text is not plain (a byte go-yaml's scanner is needed for, a directive, "..."), it stops there and
// returns plain false and the start of the line where it stopped: no line between data's first and that
// one starts with "---", and the caller finds the document's end from there.
func ScanDocument(data []byte) (end int, plain bool) {
	if !lineStartOK(data, 0) {
		return 0, false
	}
	for i := 0; i < len(data); {
		if i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			if printable8(w) {
				i += 8
				continue
			}
			// Line feeds among printable bytes (most lines end inside such a word): each starts a line
			// lineStartOK checks, in order.
			if nl := lineFeeds8(w); nl != 0 && printable8(w|nl>>2) { // a line feed | 0x20 is '*'
				for ; nl != 0; nl &= nl - 1 {
					if k := i + bits.TrailingZeros64(nl)/8 + 1; !lineStartOK(data, k) {
						return lineStop(data, k)
					}
				}
				i += 8
				continue
			}
		}
		c := data[i]
		switch {
		case c >= 0x20 && c < 0x7f:
			i++
		case c == '\n':
			i++
			if !lineStartOK(data, i) {
				return lineStop(data, i)
			}
		default:
			r, n := decodeRune(data[i:])
			if n == 0 || !allowedRune(r) {
				return bytes.LastIndexByte(data[:i], '\n') + 1, false
			}
			i += n
		}
	}
	return len(data), true
}

// lineStop is ScanDocument's verdict at the line start k that lineStartOK refused: the end of the
// document when the line starts with "---", else text plainText refuses.
func lineStop(data []byte, k int) (end int, plain bool) {
	return k, bytes.HasPrefix(data[k:], []byte("---"))
}

// printable8 reports whether the 8 bytes of w are all printable ASCII (0x20 to 0x7e): no byte is below
// 0x20 (the classic test for a byte less than n, with n = 0x20) and none is 0x7f or above (adding 1 sets
// its high bit).
func printable8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return (w-0x20*ones)&^w&highs == 0 && (w+ones|w)&highs == 0
}

// lineFeeds8 has the high bit of each byte of w that is a line feed set, and no other bit (the exact
// zero-byte test on w XOR line feeds: adding 0x7f to a byte's low seven bits carries into its high bit
// unless all are zero, and no carry crosses into the next byte).
func lineFeeds8(w uint64) uint64 {
	const lows = 0x7f7f7f7f7f7f7f7f
	x := w ^ 0x0a0a0a0a0a0a0a0a
	return ^((x&lows + lows) | x | lows)
}

// lineStartOK reports whether the line starting at i is neither a directive nor a document marker ("..."
// anywhere, "---" after the first line).
func lineStartOK(doc []byte, i int) bool {
	if i >= len(doc) {
		return true
	}
	switch c := doc[i]; c {
	case '%':
		return false
	case '-', '.':
		return i == 0 && c == '-' || i+2 >= len(doc) || doc[i+1] != c || doc[i+2] != c
	}
	return true
}

// allowedRune reports whether r (not ASCII) is a character go-yaml reads, excluding its line breaks and
// the byte order mark.
func allowedRune(r rune) bool {
	switch {
	case r == 0x2028 || r == 0x2029 || r == 0xFEFF:
		return false
	case 0xA0 <= r && r <= 0xD7FF, 0xE000 <= r && r <= 0xFFFD, 0x10000 <= r && r <= 0x10FFFF:
		return true
	}
	return false
}

// decodeRune decodes one UTF-8 sequence of 2 to 4 bytes, strictly (no overlong forms, no surrogates);
// n is 0 when b does not start with one.
func decodeRune(b []byte) (r rune, n int) {
	c := b[0]
	var need int
	var min rune
	switch {
	case c&0xE0 == 0xC0:
		need, min, r = 2, 0x80, rune(c&0x1F)
	case c&0xF0 == 0xE0:
		need, min, r = 3, 0x800, rune(c&0x0F)
	case c&0xF8 == 0xF0:
		need, min, r = 4, 0x10000, rune(c&0x07)
	default:
		return 0, 0
	}
	if len(b) < need {
		return 0, 0
	}
	for k := 1; k < need; k++ {
		if b[k]&0xC0 != 0x80 {
			return 0, 0
		}
		r = r<<6 | rune(b[k]&0x3F)
	}
	if r < min || r > 0x10FFFF || 0xD800 <= r && r <= 0xDFFF {
		return 0, 0
	}
	return r, need
}
