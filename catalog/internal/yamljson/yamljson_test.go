package yamljson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"sigs.k8s.io/yaml"
)

// same checks the package's one promise on doc: declined, or byte for byte what sigs.k8s.io/yaml returns.
// It reports whether doc was converted.
func same(t testing.TB, doc []byte) bool {
	t.Helper()
	got, ok := Convert(doc)
	if !ok {
		return false
	}
	want, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatalf("converted a document sigs.k8s.io/yaml refuses (%v):\n%q\ngot %s", err, doc, got)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("document %q:\n got %s\nwant %s", doc, got, want)
	}
	// AppendConvert writes the same JSON after what dst holds, in dst's memory when it has room (for the
	// JSON as written before mappings are sorted and duplicate keys dropped; no byte of a document takes
	// more than 6 in JSON)
	dst := append(make([]byte, 0, 8+7*len(doc)+64), "prefix: "...)
	app, _, ok := AppendConvert(dst, doc, Options{})
	if !ok || !bytes.Equal(app, append([]byte("prefix: "), want...)) || unsafe.SliceData(app) != unsafe.SliceData(dst) {
		t.Fatalf("document %q: AppendConvert gave %q (ok %v, in dst's memory %v), want %q after the prefix", doc, app, ok,
			unsafe.SliceData(app) == unsafe.SliceData(dst), want)
	}
	for _, typ := range elideTypes {
		sameElided(t, doc, want, typ)
	}
	return true
}

// handled are documents of the subset: each must be converted, and exactly.
var handled = []string{
	"",
	"# only a comment\n",
	"---\n",
	"--- # a comment\na: 1\n",
	"a: b\n",
	"a: b",
	"b: 1\na: 2\n",
	"a: 1\na: 2\n",
	"1: a\n01: b\n",
	"true: a\nyes: b\nNo: c\n",
	"a: [] # empty\nb: {}\nc:\n",
	"a:\n  b:\n    c: d\n  e: f\ng: h\n",
	"a:\n- 1\n- b: 2\n  c: 3\n- - x\n  - y\n-\nd: e\n",
	"- a\n-   b: c\n    d: e\n- \"q\": 1\n  'r': 2\n",
	"a: 'it''s'\nb: \"tab\\tnl\\nq\\\"bs\\\\ \\x41\\u00e9\\U0001F600 \\N\\_\\L\\P\\0\\a\\b\\v\\f\\r\\e\\ \"\n",
	"a: \"<b>&amp;</b>\"\nb: é ü 中文 😀\n",
	"a: \"one\n  two\n\n  three \\\n  four\"\nb: 'x\n\n\n  y'\n",
	"a: one\n  two\n\n  three # c\nb: four   \n",
	"a: |\n  line\n   more\n\n  last\n\n\nb: |-\n  x\n\nc: |+\n  y\n\n\n",
	"a: >\n  folded\n  text\n\n  para\n    indented\n  back\n",
	"a: >-\n  x\n  y\nb: >+\n  z\n\n",
	"a: |\n  no newline at end",
	"- |\n  in a sequence\n- >\n  folded\n",
	// indentation indicators, as go-yaml writes text starting with a space or a line break
	"a: |2\n   x\n",
	"a: |2\n    leading spaces\n  then text\n\n   \n  end\nb: 1\n",
	"a:\n  description: |2-\n      indented first\n    second\n  other: x\n",
	"a: |2+\n\n    after an empty line\n\n\nb: |-2\n   y\nc: |+1\n  z\n\n",
	"- |2\n   in a sequence\n- a: >2\n      folded\n     text\n",
	"a:\n- |1\n  x\n   y\n",
	"a: |4\n      x\n    \n        \n    y\n",
	"a: |2 # c\n   x\n",
	"a: |3\n   x\n    y\nb: 1\n",
	"a: true\nb: False\nc: ON\nd: off\ne: y\nf: N\ng: ~\nh: null\ni: Null\nj: NULL\nk: yes\nl: nO\n",
	"a: 0x1F\nb: 0o17\nc: 017\nd: 1_000\ne: -42\nf: +7\ng: 0b1010\nh: 9223372036854775808\ni: 99999999999999999999\nj: -0b11\nk: 0b+1\n",
	"a: 1.5\nb: -0.0\nz: 1e999\nc: 1e3\nd: .5\ne: 1e-7\nf: 1.e+21\ng: 6.02e23\nh: 1_0.5\ni: 0.1\n",
	"a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2002-12-14 21:59:43\nd: 12:30:00\ne: 1:20\n",
	"b: a-b\nc: -1\nd: ?x\ne: :x\nf: x:y\ng: a#b\nh: http://x/y?z=1#f\n",
	"key with spaces: v\n\"quoted key\": v\n'single: key': v\n\"\": empty key\n",
	"z: 1\ny: 2\nx:\n  b: 1\n  a: 2\n",
	"- 1\n- 2\n",
	"a: b\n  - c\n  && d\n  | e\n  `f` [g] {h} !i *j &k @l %m 'n' \"o\" ?p :q ,r >s\nt: u\n",
	"  a: 1\n  b: 2\n",
	"a:\n    - x\n    - y\n",
	"a: \"\\u2028 \\u2029\"\n",
	"schema: olm.bundle\nproperties:\n- type: olm.package\n  value:\n    packageName: foo\n    version: 0.1.0\n",
}

func TestHandledDocumentsConvertExactly(t *testing.T) {
	for _, doc := range handled {
		if !same(t, []byte(doc)) {
			t.Errorf("declined a document of the subset: %q", doc)
		}
	}
}

// declined are documents outside the subset, or that sigs.k8s.io/yaml refuses: each must be declined.
var declined = []string{
	"a: &x 1\nb: *x\n",                // anchor, alias
	"a: *x\n",                         // unknown alias
	"<<: {a: 1}\n",                    // merge key
	"a: !!str 1\n",                    // tag
	"a: [1, 2]\n",                     // flow sequence
	"a: {b: 1}\n",                     // flow mapping
	"a:\tb\n",                         // tab
	"a: b\r\nc: d\r\n",                // CRLF
	"\ufeffa: b\n",                    // byte order mark
	"%YAML 1.1\n---\na: b\n",          // directive
	"? a\n: b\n",                      // explicit key
	"a: 1\n b: 2\n",                   // bad indentation
	"a:\n  b: 1\n c: 2\n",             // between two levels
	"a: b: c\n",                       // mapping value in a scalar
	"a: .nan\n",                       // encoding/json refuses NaN
	"a: -.Inf\n",                      // and infinities
	"1.5: a\n",                        // float key
	"~: a\n",                          // null key
	"18446744073709551615: a\n",       // uint64 key
	"1: a\n\"1\": b\n",                // same JSON key, different YAML keys
	"true: a\n\"true\": b\n",          // same
	"a: 1\n---\nb: 2\n",               // two documents
	"a: 1\n...\n",                     // document end
	"a: \"unterminated\n",             // error
	"a: \"bad \\q escape\"\n",         // error
	"a: \"\\/\"\n",                    // an escape go-yaml v2 does not know
	"a: -\n",                          // a sequence entry where a value goes
	"a: \"\\ud800\"\n",                // surrogate escape
	"a: |0\n  x\n",                    // indentation indicator 0: an error
	"a: |22\n  x\n",                   // two digits: an error
	"a: |-+\n  x\n",                   // two chomping indicators: an error
	"a: |2x\n  x\n",                   // text after the indicators
	"a: |\n",                          // empty block scalar
	"a: |\nb: 1\n",                    // same
	"- a\nb: 1\n",                     // sequence then mapping
	"a: 1\n- b\n",                     // mapping then sequence
	"just a scalar\n",                 // top-level scalar
	"a: 'x'y\n",                       // text after a quoted scalar
	"a: \"x\"#c\n",                    // comment without a blank
	"a: \u0085\n",                     // NEL is a line break to YAML 1.1
	"a: x\u2028y\n",                   // so is U+2028
	"a: \x7f\n",                       // not allowed by go-yaml
	"a: \xff\n",                       // not UTF-8
	"a: `x`\n",                        // reserved indicator
	"a: @x\n",                         // reserved indicator
	strings.Repeat("- ", 600) + "x\n", // deeper than maxDepth
	"a" + strings.Repeat("b", 1100) + ": c\n", // key longer than a simple key may be
}

func TestDeclinedDocuments(t *testing.T) {
	for _, doc := range declined {
		if js, ok := Convert([]byte(doc)); ok {
			t.Errorf("converted a document outside the subset: %q -> %s", doc, js)
		}
	}
}

// TestPrintable8 checks the eight-byte fast path of the input filter against its byte-wise definition:
// every byte value in every position, among printable neighbours and among bytes that borrow or carry.
func TestPrintable8(t *testing.T) {
	eachWord([]byte{0x20, 0x7e, 'a', 0x21, 0x7d}, func(w [8]byte, b byte) {
		want := b >= 0x20 && b < 0x7f
		if got := printable8(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("printable8(% x) = %v, want %v", w, got, want)
		}
	})
}

// TestEscapeMask8 checks the eight-byte fast path of the string escaping against its byte-wise definition
// (the first byte to look at, found among bytes that borrow), and the escaping against encoding/json on
// strings with each byte value at every offset of a word (the bytes after it taking the word path or not).
func TestEscapeMask8(t *testing.T) {
	fills := []byte{'a', 0x20, 0x7e, 0x7f, '"', '&', '<', '>', '\\', 0x24, 0x3d, 0x5d, 0x00, 0x1f, 0x21, 0x80, 0xff}
	check := func(w [8]byte) {
		want := 8
		for k, c := range w {
			if !htmlSafeSet[c] && c != 0x7f {
				want = k
				break
			}
		}
		m := escapeMask8(binary.LittleEndian.Uint64(w[:]))
		if got := bits.TrailingZeros64(m) >> 3; got != want || m != 0 && m&0x8080808080808080 != m {
			t.Fatalf("escapeMask8(% x) = %016x: first byte %d, want %d", w, m, got, want)
		}
	}
	eachWord(fills, func(w [8]byte, _ byte) { check(w) })
	// words of several such bytes, in any order
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		var w [8]byte
		for k := range w {
			w[k] = fills[r.IntN(len(fills))]
			if r.IntN(4) == 0 {
				w[k] = byte(r.IntN(256))
			}
		}
		check(w)
	}
	for off := range 17 {
		for b := range 256 {
			for _, tail := range []string{"", "x", "0123456789abcdef", "\xc3\xa9 caf\xc3\xa9 \xe2\x80\xa8 <&>"} {
				src := strings.Repeat("a", off) + string([]byte{byte(b)}) + tail
				want, err := json.Marshal(src)
				if err != nil {
					t.Fatal(err)
				}
				if got := appendString(nil, []byte(src)); !bytes.Equal(got, want) {
					t.Fatalf("appendString(%q) = %s, want %s", src, got, want)
				}
			}
		}
	}
}

// eachWord calls fn with every word of eight fill bytes, for each fill, with one of them replaced by each
// byte value b.
func eachWord(fills []byte, fn func(w [8]byte, b byte)) {
	for _, fill := range fills {
		for pos := range 8 {
			for b := range 256 {
				var w [8]byte
				for k := range w {
					w[k] = fill
				}
				w[pos] = byte(b)
				fn(w, byte(b))
			}
		}
	}
}

// TestLineFeeds8 checks the line-feed mask against its byte-wise definition, with line feeds and bytes
// that borrow or carry in every position, and plainText's word-at-a-time path against a byte-at-a-time
// filter on lines that start with every byte after a line feed placed at every offset of a word.
func TestLineFeeds8(t *testing.T) {
	eachWord([]byte{'\n', 0x0b, 0x09, 0x8a, 0x00, 0x7f, 'a'}, func(w [8]byte, _ byte) {
		var want uint64
		for k, c := range w {
			if c == '\n' {
				want |= 0x80 << (8 * k)
			}
		}
		if got := lineFeeds8(binary.LittleEndian.Uint64(w[:])); got != want {
			t.Fatalf("lineFeeds8(% x) = %#x, want %#x", w, got, want)
		}
	})
	byteWise := func(doc []byte) bool {
		for i := range doc {
			if (i == 0 || doc[i-1] == '\n') && !lineStartOK(doc, i) {
				return false
			}
			if c := doc[i]; c != '\n' && (c < 0x20 || c >= 0x7f) {
				return false // (the documents here are ASCII)
			}
		}
		return true
	}
	for off := range 16 {
		for b := range 128 {
			for _, after := range []string{"", "--", "..", "-x", "\n"} {
				doc := []byte(strings.Repeat("a", off) + "\n" + string(rune(b)) + after + " value\nkey: x\n")
				if got, want := plainText(doc), byteWise(doc); got != want {
					t.Fatalf("plainText(%q) = %v, want %v", doc, got, want)
				}
			}
		}
	}
}

// TestScanDocument holds ScanDocument to its definition: the document ends at the first line after the
// first that starts with "---", and is plain when every line before it starts as lineStartOK allows and
// every byte is printable ASCII or a line feed (the texts here are ASCII); when it is not, the scan stops
// at the line of the first thing it refuses. Every text of up to seven line feeds, dashes, dots, letters
// and tabs, after every number of letters up to 17 (each line feed at every offset of a word, the word
// path and the byte path).
func TestScanDocument(t *testing.T) {
	want := func(data []byte) (int, bool) {
		end := len(data)
		for k := 1; k < len(data); k++ {
			if data[k-1] == '\n' && bytes.HasPrefix(data[k:], []byte("---")) {
				end = k
				break
			}
		}
		line := 0
		for i, c := range data[:end] {
			if i > 0 && data[i-1] == '\n' {
				line = i
			}
			if (i == 0 || data[i-1] == '\n') && !lineStartOK(data[:end], i) || c != '\n' && (c < 0x20 || c >= 0x7f) {
				return line, false
			}
		}
		return end, true
	}
	alphabet := []byte{'\n', '-', '.', 'a', '\t'}
	var each func(b []byte)
	each = func(b []byte) {
		for off := range 18 {
			data := append([]byte(strings.Repeat("a", off)), b...)
			end, plain := ScanDocument(data)
			if wantEnd, wantPlain := want(data); end != wantEnd || plain != wantPlain {
				t.Fatalf("ScanDocument(%q) = %d, %v; want %d, %v", data, end, plain, wantEnd, wantPlain)
			}
			if plain && end == len(data) != plainText(data) {
				t.Fatalf("plainText(%q) disagrees with ScanDocument", data)
			}
		}
		if len(b) == 7 {
			return
		}
		for _, c := range alphabet {
			each(append(b, c))
		}
	}
	each(nil)
}

// TestWriterOutputIsConverted holds the subset to what opm's writer (sigs.k8s.io/yaml over go-yaml)
// emits for the strings a catalog carries: every such document must be converted, not only compared, or
// validate takes the slow path on it. Text starting with a space or a line break is written as a literal
// block scalar with an indentation indicator ("|2", "|2-", "|2+"), nested as deep as a bundle's
// olm.csv.metadata description.
func TestWriterOutputIsConverted(t *testing.T) {
	texts := []string{
		"plain", "two\nlines", "two\nlines\n", "trailing\n\n\n", " leading space\nthen text\n", "  two spaces",
		"\nleading line break\n", "\n\nseveral\n\n", " \n x\n\n", "  # not a comment\n- not an entry\n",
		"   indented\n\n      more\n  less\n", " é ü 中文\n", "\ttab first\n", "ends with space \nx\n", "x\n ",
		"\u2028 first", " a: b\n c: d\n",
	}
	for _, text := range texts {
		blob := map[string]any{
			"schema": "olm.bundle", "description": text,
			"properties": []any{map[string]any{"type": "olm.csv.metadata", "value": map[string]any{
				"description": text, "annotations": map[string]any{"alm-examples": text},
				"nested": []any{[]any{text}, map[string]any{"deeper": []any{text}}},
			}}},
		}
		doc, err := yaml.Marshal(blob)
		if err != nil {
			t.Fatal(err)
		}
		if !same(t, doc) {
			t.Errorf("declined what opm's writer emits for %q:\n%s", text, doc)
		}
	}
}

// TestNumberLikeScalars holds resolve's shortcut for scalars that start like numbers (numberBytes, and
// go-yaml's float syntax without a regular expression) to sigs.k8s.io/yaml: every plain scalar of up to four
// bytes from an alphabet of digits, signs, dots, underscores, exponents, base prefixes, hexadecimal digits and
// a few bytes no number holds, then versions, dates and times.
func TestNumberLikeScalars(t *testing.T) {
	const alphabet = "019._+-eExXoObBfFaZ:"
	var scalars []string
	var build func(prefix string, n int)
	build = func(prefix string, n int) {
		if prefix != "" && strings.IndexByte("0123456789+-", prefix[0]) >= 0 {
			scalars = append(scalars, prefix)
		}
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			build(prefix+string(c), n-1)
		}
	}
	build("", 4)
	scalars = append(scalars, "0.1.0", "1.2.3-rc.1", "2024-01-31", "2024-01-31T10:00:00Z", "1e10", "-1.5e-3", "+.5",
		"0x1F", "0o17", "0b101", "-0b11", "1_000", "0755", "089", "9223372036854775808", "18446744073709551616",
		"1.", ".5e3", "1e", "1e+", "12:30", "4.19.0", "1.0e+06", "-", "+")
	floatSyntax := regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`) // go-yaml v2's
	converted := 0
	for _, s := range scalars {
		if got, want := yamlStyleFloat(s), floatSyntax.MatchString(s); got != want {
			t.Fatalf("yamlStyleFloat(%q) = %v, want %v", s, got, want)
		}
		doc := []byte("key: " + s + "\n")
		want, err := yaml.YAMLToJSON(doc)
		got, ok := Convert(doc)
		if !ok {
			continue // declined: sigs.k8s.io/yaml converts it instead
		}
		converted++
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("scalar %q: got %s, want %s (%v)", s, got, want, err)
		}
	}
	if converted < len(scalars)/2 {
		t.Fatalf("converted %d of %d scalars: the test no longer reaches resolve", converted, len(scalars))
	}
	t.Logf("%d of %d scalars converted, each as sigs.k8s.io/yaml does", converted, len(scalars))
}

// TestSkipNoStops: the word-at-a-time skip over a plain scalar never passes a line stop (':', '#', a line
// feed) and stops within the word holding the first one, whatever the neighbouring bytes (ones next to the
// stops' values borrow or carry in the word test).
func TestSkipNoStops(t *testing.T) {
	for _, fill := range []byte{'A', '9', '+', '/', '=', ';', '"', '"' - 1, '\v', '\t', 0x80, 0xff} {
		for _, stop := range []byte{':', '#', '\n'} {
			for pos := range 24 {
				doc := bytes.Repeat([]byte{fill}, 24)
				doc[pos] = stop
				for from := 0; from <= pos; from++ {
					j := skipNoStops(doc, from)
					if j < from || j > pos || pos-j >= 8 {
						t.Fatalf("skipNoStops(%q, %d) = %d, the first stop is at %d", doc, from, j, pos)
					}
				}
			}
		}
		doc := bytes.Repeat([]byte{fill}, 21)
		if j := skipNoStops(doc, 0); j != 16 {
			t.Fatalf("skipNoStops(%q, 0) = %d, want 16 (the last whole word's end)", doc, j)
		}
	}
}
