package yamljson

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzGenerated builds YAML documents from the fuzzer's bytes with a grammar of the constructs opm and
// go-yaml write and their near misses (odd indentation, blank lines with stray spaces, comments inside
// scalars, every scalar style, keys of every type), so that most inputs are in the subset and the
// comparison with sigs.k8s.io/yaml is exercised on them, not only on what random bytes reach.
func FuzzGenerated(f *testing.F) {
	for _, s := range []string{"", "\x01\x02\x03", "\x07\x11\x23\x35\x47\x59\x6b\x7d", strings.Repeat("\x13\x37", 40),
		strings.Repeat("\xff\x10\x80", 30), "\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, choices []byte) {
		g := &gen{in: choices}
		same(t, []byte(g.document()))
	})
}

// TestGeneratedDocuments runs the fuzz grammar on a fixed set of pseudo-random choices, so every run of the
// unit tests compares a few thousand subset documents with sigs.k8s.io/yaml, and checks that the grammar
// does reach the subset (a converter that declined everything would pass the comparison).
func TestGeneratedDocuments(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	converted, n := 0, 3000
	for range n {
		choices := make([]byte, 20+rng.IntN(200))
		for i := range choices {
			choices[i] = byte(rng.Uint32())
		}
		g := &gen{in: choices}
		if same(t, []byte(g.document())) {
			converted++
		}
	}
	t.Logf("%d of %d generated documents converted, %d with elision of a tagged value", converted, n, elidedDocs.Load())
	if converted < n/4 {
		t.Errorf("only %d of %d generated documents converted: the grammar no longer reaches the subset", converted, n)
	}
}

type gen struct {
	in  []byte
	out strings.Builder
}

func (g *gen) next() int {
	if len(g.in) == 0 {
		return 0
	}
	c := g.in[0]
	g.in = g.in[1:]
	return int(c)
}

func (g *gen) pick(list []string) string { return list[g.next()%len(list)] }

var (
	genKeys = []string{"a", "b", "name", "schema", "1", "01", "0x1", "true", "yes", "On", "n", "~", "null", "1.5",
		`"a b"`, `"1"`, `'true'`, `"\u00e9"`, `'it''s'`, "a:b", "a#b", "<<", "-x", "?x", "key with spaces", "é", "z", "Z", "_", "-1", "a b",
		"type", "value", "type", "value", "Type", `"value"`}
	genScalars = []string{"x", "hello world", "true", "No", "off", "Y", "0x1F", "0o17", "017", "1_000", "-0b1", "0b+1", "1e3", ".5",
		"-.5e-3", "1.", "6.02e23", "1e999", "2001-12-14", "2001-12-14 21:59:43.10", "12:30", "null", "~", "NULL", ".inf", ".NaN",
		"a: b", "a #b", "a#b", "x'y", `"q"`, `'q'`, `"a\"b\\c \x41 \u263a \n"`, `'a''b'`, "<&>", "é ü", "😀", "-", "- a", "? a", ":x",
		"-x", "?x", "[a]", "{b}", "[]", "{}", "[a, b]", "!t x", "&a x", "*a", "|", ">", "#c", "@x", "`x`", "%x", "x # c",
		"9223372036854775807", "9223372036854775808", "18446744073709551616", "-9223372036854775809", "0", "-0", "+1", "1_0.5"}
	genWords = []string{"word", "- dash", "# hash", "a: b", "&& x", "| y", "[z]", "'q'", "\"d\"", "x:", "trailing  ", "é", "1"}
)

func (g *gen) w(s string) { g.out.WriteString(s) }
func (g *gen) ind(n int)  { g.w(strings.Repeat(" ", max(n, 0))) }
func (g *gen) document() string {
	switch g.next() % 4 {
	case 1:
		g.w("---\n")
	case 2:
		g.w("--- # c\n")
	}
	g.junk(0)
	if g.next()%3 == 0 {
		g.sequence(g.next()%2, 0, false)
	} else {
		g.mapping(g.next()%2, 0)
	}
	g.junk(0)
	return g.out.String()
}

// junk writes blank lines (some with stray spaces) and comment lines, or nothing.
func (g *gen) junk(indent int) {
	for n := g.next() % 5; n > 2; n-- {
		switch g.next() % 3 {
		case 0:
			g.w("\n")
		case 1:
			g.ind(g.next() % 6)
			g.w("\n")
		default:
			g.ind(indent + g.next()%3 - 1)
			g.w("# comment\n")
		}
	}
}

func (g *gen) mapping(indent, depth int) {
	if g.next()%4 == 0 { // a tagged value, as a catalog's property, or a near miss (see elide.go)
		g.ind(indent)
		g.w(g.pick([]string{"type", "type", "type", "Type", `"type"`}) + ": " + g.pick([]string{"x", "x", "olm.csv.metadata", "'x'", "1"}) + "\n")
		g.ind(indent)
		g.w(g.pick([]string{"value", "value", "value", "Value", "type"}) + ":")
		g.value(indent, depth, true)
		if g.next()%4 != 0 {
			return
		}
	}
	for n := 1 + g.next()%4; n > 0; n-- {
		g.ind(indent)
		g.w(g.pick(genKeys))
		g.w(":")
		g.value(indent, depth, true)
		g.junk(indent)
	}
}

func (g *gen) sequence(indent, depth int, indentless bool) {
	for n := 1 + g.next()%3; n > 0; n-- {
		g.ind(indent)
		g.w("-")
		g.value(indent, depth, false)
		g.junk(indent)
	}
}

// value writes what follows a key's ":" or an entry's "-", ending with its last line's line feed.
func (g *gen) value(indent, depth int, inMapping bool) {
	if depth > 4 {
		g.w(" x\n")
		return
	}
	step := 1 + g.next()%3
	switch g.next() % 12 {
	case 0, 1:
		g.w(" ")
		g.w(g.pick(genScalars))
		g.w("\n")
	case 2:
		g.w("\n")
		g.mapping(indent+step, depth+1)
	case 3:
		g.w("\n")
		if inMapping && g.next()%2 == 0 {
			g.sequence(indent, depth+1, true)
		} else {
			g.sequence(indent+step, depth+1, false)
		}
	case 4:
		g.blockScalar(indent, step)
	case 5:
		g.w("\n")
	case 6: // multi-line plain
		g.w(" first")
		for n := g.next() % 4; n > 0; n-- {
			g.w("\n")
			if g.next()%3 == 0 {
				g.ind(g.next() % 4)
				g.w("\n")
			}
			g.ind(indent + g.next()%4)
			g.w(g.pick(genWords))
		}
		g.w("\n")
	case 7: // multi-line quoted
		q := `"`
		if g.next()%2 == 0 {
			q = "'"
		}
		g.w(" " + q + "one")
		for n := g.next() % 4; n > 0; n-- {
			switch g.next() % 4 {
			case 0:
				g.w(` \`)
			case 1:
				g.w("  ")
			}
			g.w("\n")
			if g.next()%3 == 0 {
				g.w("\n")
			}
			g.ind(indent + g.next()%4)
			g.w(g.pick(genWords))
		}
		g.w(q + "\n")
	case 8:
		if inMapping {
			g.w(" {}\n")
		} else {
			g.w(" []\n")
		}
	case 9: // compact mapping or sequence on the entry's line
		if inMapping {
			g.w(" " + g.pick(genScalars) + " # c\n")
			return
		}
		pad := g.next() % 3
		g.ind(1 + pad)
		if g.next()%2 == 0 {
			g.w(g.pick(genKeys) + ":")
			g.value(indent+2+pad, depth+1, true)
			g.mapping(indent+2+pad, depth+1)
		} else {
			g.w("-")
			g.value(indent+2+pad, depth+1, false)
		}
	default:
		g.w(" " + g.pick(genWords) + "\n")
	}
}

func (g *gen) blockScalar(indent, step int) {
	// the indentation indicators go-yaml writes (the step past the holder's indentation, before the
	// chomping indicator) and others, which may not match the content's indentation
	d := string(rune('0' + step%10))
	g.w(" " + g.pick([]string{"|", "|-", "|+", ">", ">-", ">+", "|" + d, "|" + d + "-", "|" + d + "+", ">" + d, "|-" + d,
		"|2", "|2-", "|+1", ">3", "| # c", "|" + d + " # c", ">-  "}) + "\n")
	for n := g.next() % 5; n >= 0; n-- {
		switch g.next() % 6 {
		case 0:
			g.w("\n")
		case 1:
			g.ind(indent + step + g.next()%4)
			g.w("\n")
		case 2:
			g.ind(indent + step + 1 + g.next()%2)
			g.w("more indented\n")
		default:
			g.ind(indent + step)
			g.w(g.pick(genWords) + "\n")
		}
	}
}
