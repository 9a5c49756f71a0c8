package render

import (
	"bytes"
	"fmt"
	"strings"
)

// maxEditDistance bounds the Myers search (its memory grows with the square of the distance); beyond
// it the differing middle of the two files is shown as one replaced block.
const maxEditDistance = 2000

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

type opKind byte

const (
	opEqual  opKind = ' '
	opDelete opKind = '-'
	opInsert opKind = '+'
)

// lineOp is one line of an edit script: a[ai] kept or deleted, or b[bi] inserted; ai and bi are also
// the positions an insertion or deletion happens at on the other side.
type lineOp struct {
	kind   opKind
	ai, bi int
}

// unifiedDiff returns a unified diff from a to b with three lines of context, at most maxLines lines
// after the two header lines, and the 1-based line of a where the first change is. It returns "" when a
// and b are equal.
func unifiedDiff(aName, bName string, a, b []byte, maxLines int) (string, int) {
	if bytes.Equal(a, b) {
		return "", 0
	}
	al, bl := splitLines(a), splitLines(b)
	ops := diffLines(al, bl)
	var body []string
	first := 0
	for _, h := range hunks(ops) {
		if first == 0 {
			first = h.firstChangeA + 1
		}
		body = append(body, h.header)
		for _, op := range ops[h.from:h.to] {
			line := ""
			if op.kind == opInsert {
				line = bl[op.bi]
			} else {
				line = al[op.ai]
			}
			body = append(body, string(op.kind)+strings.TrimSuffix(line, "\n"))
			if !strings.HasSuffix(line, "\n") {
				body = append(body, `\ No newline at end of file`)
			}
		}
	}
	if len(body) > maxLines {
		left := len(body) - maxLines
		body = append(body[:maxLines], fmt.Sprintf("... (%d more diff lines not shown)", left))
	}
	return "--- " + aName + "\n+++ " + bName + "\n" + strings.Join(body, "\n") + "\n", first
}

// splitLines splits data after each newline; the last line may lack one.
func splitLines(data []byte) []string {
	var lines []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, string(data))
			break
		}
		lines = append(lines, string(data[:i+1]))
		data = data[i+1:]
	}
	return lines
}

// diffLines returns a shortest edit script from a to b (Myers' algorithm) after trimming their common
// prefix and suffix; past maxD edits, the script replaces the whole differing middle.
func diffLines(a, b []string) []lineOp { return diffLinesBounded(a, b, maxEditDistance) }

func diffLinesBounded(a, b []string, maxD int) []lineOp {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []lineOp
	for i := 0; i < pre; i++ {
		ops = append(ops, lineOp{opEqual, i, i})
	}
	mid, ok := myers(a[pre:len(a)-suf], b[pre:len(b)-suf], maxD)
	if !ok {
		mid = nil
		for i := range len(a) - suf - pre {
			mid = append(mid, lineOp{opDelete, i, 0})
		}
		for j := range len(b) - suf - pre {
			mid = append(mid, lineOp{opInsert, len(a) - suf - pre, j})
		}
	}
	for _, op := range mid {
		ops = append(ops, lineOp{op.kind, op.ai + pre, op.bi + pre})
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, lineOp{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// myers finds a shortest edit script of at most maxD edits, or reports false.
func myers(a, b []string, maxD int) ([]lineOp, bool) {
	n, m := len(a), len(b)
	limit := min(n+m, maxD)
	off := limit + 1
	v := make([]int, 2*limit+3)
	// trace[d] is v[-d-1 .. d+1] as it was before round d.
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int, n, m int) []lineOp {
	var ops []lineOp
	x, y := n, m
	for d := len(trace) - 1; d > 0; d-- {
		vd := trace[d]
		get := func(k int) int { return vd[k+d+1] }
		k := x - y
		prevK := k - 1
		if k == -d || (k != d && get(k-1) < get(k+1)) {
			prevK = k + 1
		}
		prevX := get(prevK)
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x--
			y--
			ops = append(ops, lineOp{opEqual, x, y})
		}
		if x == prevX {
			y--
			ops = append(ops, lineOp{opInsert, x, y})
		} else {
			x--
			ops = append(ops, lineOp{opDelete, x, y})
		}
	}
	for x > 0 && y > 0 {
		x--
		y--
		ops = append(ops, lineOp{opEqual, x, y})
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// hunk is ops[from:to] with its "@@" header.
type hunk struct {
	from, to     int
	header       string
	firstChangeA int
}

// hunks groups the changes of ops with diffContext lines of context, merging hunks that would touch.
func hunks(ops []lineOp) []hunk {
	var out []hunk
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		from := max(0, i-diffContext)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != opEqual {
				end = j + 1
			} else if j-end >= 2*diffContext {
				break
			}
		}
		to := min(len(ops), end+diffContext)
		out = append(out, newHunk(ops, from, to, i))
		i = to
	}
	return out
}

func newHunk(ops []lineOp, from, to, firstChange int) hunk {
	aCount, bCount := 0, 0
	for _, op := range ops[from:to] {
		if op.kind != opInsert {
			aCount++
		}
		if op.kind != opDelete {
			bCount++
		}
	}
	// Every op carries its position on both sides (where an insertion or deletion happens on the other).
	return hunk{from: from, to: to, firstChangeA: ops[firstChange].ai,
		header: fmt.Sprintf("@@ -%s +%s @@", hunkRange(ops[from].ai, aCount), hunkRange(ops[from].bi, bCount))}
}

// hunkRange formats a 0-based start and a count as unified diff does (an empty range names the line
// before it).
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}
