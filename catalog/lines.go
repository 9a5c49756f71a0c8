package catalog

import "bytes"

// lineIndex turns byte offsets into 1-based line and column numbers. Offsets are usually asked for in
// increasing order, so it counts forward from the last answer; a step back recounts from the start.
type lineIndex struct {
	data      []byte
	off       int // last offset answered
	line      int // its line (0 = not started)
	lineStart int // offset where that line starts
}

func (x *lineIndex) at(off int) (line, col int) {
	if off > len(x.data) {
		off = len(x.data)
	}
	if x.line == 0 || off < x.off {
		x.off, x.line, x.lineStart = 0, 1, 0
	}
	seg := x.data[x.off:off]
	if n := bytes.Count(seg, []byte{'\n'}); n > 0 {
		x.line += n
		x.lineStart = x.off + bytes.LastIndexByte(seg, '\n') + 1
	}
	x.off = off
	return x.line, off - x.lineStart + 1
}
