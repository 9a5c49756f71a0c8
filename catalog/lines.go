package catalog

import "bytes"

// lineIndex turns byte offsets into 1-based line and column numbers. Offsets are usually asked for in
// increasing order, so it counts forward from the last answer; a step back recounts from the base (see
// rebase), or from the start when it goes before that.
type lineIndex struct {
	data []byte
	lineMark
	base lineMark
}

type lineMark struct {
	off       int // last offset answered
	line      int // its line (0 = not started)
	lineStart int // offset where that line starts
}

// rebase makes off the base: the bytes before it are not read again unless an offset before it is asked
// for (the loader gives back the pages of a mapped file it is done with).
func (x *lineIndex) rebase(off int) {
	x.at(off)
	x.base = x.lineMark
}

func (x *lineIndex) at(off int) (line, col int) {
	if off > len(x.data) {
		off = len(x.data)
	}
	if x.line == 0 || off < x.off {
		x.lineMark = lineMark{off: 0, line: 1, lineStart: 0}
		if x.base.line > 0 && off >= x.base.off {
			x.lineMark = x.base
		}
	}
	seg := x.data[x.off:off]
	if n := bytes.Count(seg, []byte{'\n'}); n > 0 {
		x.line += n
		x.lineStart = x.off + bytes.LastIndexByte(seg, '\n') + 1
	}
	x.off = off
	return x.line, off - x.lineStart + 1
}
