package policy

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// textLength counts what len([]rune(s)) counts of the decoded string (Python's len, which
// operator-pipelines' ".{20,}" measures), escapes and all, without decoding it.
func TestTextLengthIsTheRuneCount(t *testing.T) {
	raws := []string{`null`, `""`, `"   "`, `"\n\t a \u00a0"`, `"\u0085x\u0085"`, `"\ud83d\ude00 ok"`, `"\ud83d lone"`,
		`"tab\\t\"quoted\"\/"`, `"caf\u00e9 \u2003"`, "\"\xff\xfe bad utf-8 \"", `"  A description of twenty  "`}
	pieces := []string{" ", "\\n", "\\t", "\\u0020", "\\u00a0", "a", "é", "\\ud83d\\ude00", "\\ud800", "\\\\", "\\\"", "日本", "\\r"}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b strings.Builder
		b.WriteByte('"')
		for range rnd.IntN(12) {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		b.WriteByte('"')
		raws = append(raws, b.String())
	}
	for _, raw := range raws {
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		var n textLength
		if err := n.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if want := len([]rune(s)); int(n) != want {
			t.Errorf("%s: %d, want %d", raw, n, want)
		}
	}
	var n textLength
	if err := n.UnmarshalJSON([]byte(`42`)); err == nil {
		t.Error("a number is not a description")
	}
}
