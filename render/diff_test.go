package render

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestUnifiedDiffExample(t *testing.T) {
	a := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n"
	b := "a\nb\nc\nD\ne\nf\ng\nh\ni\nj\nk\nl"
	got, line := unifiedDiff("x", "y", []byte(a), []byte(b), 200)
	want := `--- x
+++ y
@@ -1,7 +1,7 @@
 a
 b
 c
-d
+D
 e
 f
 g
@@ -9,3 +9,4 @@
 i
 j
 k
+l
\ No newline at end of file
`
	if got != want || line != 4 {
		t.Errorf("got (line %d):\n%s\nwant:\n%s", line, got, want)
	}
	if d, _ := unifiedDiff("x", "y", []byte(a), []byte(a), 200); d != "" {
		t.Errorf("equal inputs gave %q", d)
	}
}

func TestUnifiedDiffCap(t *testing.T) {
	var a, b strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&a, "line %d\n", i)
		fmt.Fprintf(&b, "LINE %d\n", i)
	}
	got, _ := unifiedDiff("x", "y", []byte(a.String()), []byte(b.String()), 200)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 2+200+1 || lines[len(lines)-1] != "... (1801 more diff lines not shown)" {
		t.Errorf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}

// TestUnifiedDiffRandom applies random diffs back and checks the edit scripts are shortest.
func TestUnifiedDiffRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	gen := func() []byte {
		var sb strings.Builder
		for range rng.IntN(30) {
			sb.WriteString(strconv.Itoa(rng.IntN(4)))
			sb.WriteByte('\n')
		}
		if rng.IntN(4) == 0 {
			sb.WriteString("tail")
		}
		return []byte(sb.String())
	}
	for i := range 3000 {
		a, b := gen(), gen()
		d, _ := unifiedDiff("a", "b", a, b, 1<<30)
		if got := applyDiff(t, string(a), d); got != string(b) {
			t.Fatalf("case %d: applying the diff gives %q, want %q\n%s", i, got, b, d)
		}
		al, bl := splitLines(a), splitLines(b)
		edits := 0
		for _, op := range diffLines(al, bl) {
			if op.kind != opEqual {
				edits++
			}
		}
		if want := len(al) + len(bl) - 2*lcs(al, bl); edits != want {
			t.Fatalf("case %d: %d edits, the shortest script has %d", i, edits, want)
		}
	}
}

func TestDiffFallsBackBeyondItsBound(t *testing.T) {
	var a, b []string
	for i := range 40 {
		a = append(a, strconv.Itoa(i)+"\n")
		if i%2 == 0 {
			b = append(b, strconv.Itoa(i)+"\n")
		} else {
			b = append(b, "changed\n")
		}
	}
	a = append([]string{"same\n"}, append(a, "same\n")...)
	b = append([]string{"same\n"}, append(b, "same\n")...)
	if _, ok := myers(a[1:41], b[1:41], 10); ok {
		t.Fatal("want myers to give up past 10 edits")
	}
	ops := diffLinesBounded(a, b, 10)
	var got []string
	kinds := ""
	for _, op := range ops {
		switch op.kind {
		case opEqual:
			got = append(got, a[op.ai])
		case opInsert:
			got = append(got, b[op.bi])
		}
		if kinds == "" || kinds[len(kinds)-1] != byte(op.kind) {
			kinds += string(op.kind)
		}
	}
	// The common first line (and "0") stay, then everything else in the middle is replaced.
	if strings.Join(got, "") != strings.Join(b, "") || kinds != " -+ " {
		t.Fatalf("fallback script %q rebuilds %q", kinds, got)
	}
}

func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// applyDiff applies a unified diff to a, checking every context and deleted line.
func applyDiff(t *testing.T, a, d string) string {
	t.Helper()
	if d == "" {
		return a
	}
	src := splitLines([]byte(a))
	var out []string
	pos := 0
	lines := strings.Split(strings.TrimSuffix(d, "\n"), "\n")[2:]
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		noEOL := i+1 < len(lines) && lines[i+1] == `\ No newline at end of file`
		text := l[1:]
		if !noEOL {
			text += "\n"
		}
		switch l[0] {
		case '@':
			var as, ac, bs, bc int
			if _, err := fmt.Sscanf(l, "@@ -%d,%d +%d,%d @@", &as, &ac, &bs, &bc); err != nil {
				t.Fatalf("bad hunk header %q", l)
			}
			start := as - 1
			if ac == 0 {
				start = as
			}
			out = append(out, src[pos:start]...)
			pos = start
			if got := len(out); (bc == 0 && got != bs) || (bc > 0 && got != bs-1) {
				t.Fatalf("hunk %q starts at output line %d", l, got)
			}
		case ' ', '-':
			if pos >= len(src) || src[pos] != text {
				t.Fatalf("line %q does not match %q at %d", l, src, pos)
			}
			if l[0] == ' ' {
				out = append(out, text)
			}
			pos++
		case '+':
			out = append(out, text)
		case '\\':
		default:
			t.Fatalf("bad diff line %q", l)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}
