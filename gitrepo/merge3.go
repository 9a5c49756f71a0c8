package gitrepo

import (
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// hunk replaces the base's lines [start, end) with lines.
type hunk struct {
	start, end int
	lines      []string
}

// merge3 merges the changes from o to a and from o to b, line by line: the hunks of each side are
// applied; hunks of the two sides that overlap or touch (no unchanged line between them) merge only when
// both sides make the same change there, otherwise ok is false. Lines keep their line feeds, so a last
// line without one stays so.
func merge3(o, a, b string) (merged string, ok bool) {
	base := splitLines(o)
	ha, hb := hunksOf(o, a), hunksOf(o, b)
	var out strings.Builder
	pos, i, j := 0, 0, 0
	for i < len(ha) || j < len(hb) {
		var ga, gb []hunk
		if j >= len(hb) || i < len(ha) && ha[i].start <= hb[j].start {
			ga, i = append(ga, ha[i]), i+1
		} else {
			gb, j = append(gb, hb[j]), j+1
		}
		start, end := first(ga, gb).start, first(ga, gb).end
		for grew := true; grew; {
			switch {
			case i < len(ha) && ha[i].start <= end:
				ga, end, i = append(ga, ha[i]), max(end, ha[i].end), i+1
			case j < len(hb) && hb[j].start <= end:
				gb, end, j = append(gb, hb[j]), max(end, hb[j].end), j+1
			default:
				grew = false
			}
		}
		writeLines(&out, base[pos:start])
		ra, rb := applyHunks(base, ga, start, end), applyHunks(base, gb, start, end)
		switch {
		case len(gb) == 0:
			out.WriteString(ra)
		case len(ga) == 0, ra == rb:
			out.WriteString(rb)
		default:
			return "", false
		}
		pos = end
	}
	writeLines(&out, base[pos:])
	return out.String(), true
}

// first is the hunk a group starts with (the one side that has one).
func first(ga, gb []hunk) hunk {
	if len(ga) > 0 {
		return ga[0]
	}
	return gb[0]
}

// applyHunks is the base's lines [start, end) with hs (hunks within them, in order) applied.
func applyHunks(base []string, hs []hunk, start, end int) string {
	var b strings.Builder
	p := start
	for _, h := range hs {
		writeLines(&b, base[p:h.start])
		writeLines(&b, h.lines)
		p = h.end
	}
	writeLines(&b, base[p:end])
	return b.String()
}

// hunksOf are the changes from o to x, in o's line numbers, in order.
func hunksOf(o, x string) []hunk {
	var out []hunk
	var cur *hunk
	line := 0
	for _, d := range diff.Do(o, x) {
		n := splitLines(d.Text)
		switch d.Type {
		case diffmatchpatch.DiffEqual:
			if cur != nil {
				out, cur = append(out, *cur), nil
			}
			line += len(n)
			continue
		}
		if cur == nil {
			cur = &hunk{start: line, end: line}
		}
		if d.Type == diffmatchpatch.DiffDelete {
			cur.end += len(n)
			line += len(n)
		} else {
			cur.lines = append(cur.lines, n...)
		}
	}
	if cur != nil {
		out = append(out, *cur)
	}
	return out
}

// splitLines splits s after each line feed.
func splitLines(s string) []string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func writeLines(b *strings.Builder, lines []string) {
	for _, l := range lines {
		b.WriteString(l)
	}
}
