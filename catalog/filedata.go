package catalog

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"
	"unsafe"
)

// A file being parsed is live memory, and the garbage collector lets the heap grow to twice what is live
// (GOGC=100): read into the heap, a catalog's large files (a few MB of YAML with inline bundle objects)
// counted twice toward a load's peak, and, parsed by two workers at once, made it depend on which files
// happened to be in flight. Files of at least minMapped bytes are therefore mapped where the system can
// (mmap_linux.go): mapped pages are not heap, and the loader gives them back as it goes (releaseBefore),
// since it reads blobs and YAML documents in order. A worker then holds about one blob or document of its
// file at a time, however large the file. Smaller files are read into the worker's reused buffer: for
// them a mapping costs more system calls than it saves.

// minMapped is the size from which a file is mapped (a variable so tests can map every file).
var minMapped int64 = 64 << 10

// releaseStep is how many bytes of a mapped file, at least, are given back at once (one system call; a
// variable so tests can give back small steps). Giving pages back is not free: the kernel flushes the
// mapping from every core that runs the process, and in a virtual machine each of those flushes is an
// exit. Mapped pages are the file's, not private memory, so they are given back only in large steps: a
// catalog file of a few MB (v4.20's largest is 2.3 MB) is never given back before it is unmapped, and one
// of a GB holds a worker's share of at most this much. In 128 kB steps, the system calls giving pages back
// were 1.4% of the CPU samples of validating v4.20 (perf record, 20 runs), and the other core's flushes
// were on top of that.
var releaseStep = 16 << 20

var pageSize = os.Getpagesize()

// inFlight counts the bytes of file data a load's workers hold, and the most they held at once: a read
// file is held whole; of a mapped one, what the loader has read (reach) and not yet given back. Total is
// every byte counted as read.
type inFlight struct{ cur, peak, total atomic.Int64 }

func (f *inFlight) add(n int64) {
	if n > 0 {
		f.total.Add(n)
	}
	c := f.cur.Add(n)
	for p := f.peak.Load(); c > p && !f.peak.CompareAndSwap(p, c); p = f.peak.Load() {
	}
}

// reach records that the loader has read the file up to off.
func (l *fileLoader) reach(off int) {
	if off > l.reached {
		l.flight.add(int64(off - l.reached))
		l.reached = off
	}
}

// releaseBefore gives back the pages of a mapped file before off: the loader is done with them. Reading
// them again (a position counted from the file's start) reads the file again: correct, only slower.
func (l *fileLoader) releaseBefore(off int) {
	if !l.mapped {
		return
	}
	to := off &^ (pageSize - 1)
	if to-l.released < releaseStep {
		return
	}
	l.lines.rebase(off)
	dropPages(l.data[l.released:to])
	l.flight.add(-int64(to - l.released))
	l.released = to
}

// parseMapped parses a mapped file. A file truncated while it is parsed loses the mapped pages past its
// new end, and reading one faults: that is reported as the file changing while it was read, and what was
// decoded from it is dropped; any other fault or panic is not this function's to handle.
func (l *fileLoader) parseMapped(data []byte) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if f, ok := r.(interface{ Addr() uintptr }); ok && inside(data, f.Addr()) {
			l.cat = &Catalog{}
			l.report(Pos{File: l.file}, RuleFile, fmt.Sprintf("read %s: the file changed while it was read (%v)", l.file, r),
				"validate again once nothing writes to the catalog")
			return
		}
		panic(r)
	}()
	l.parse(data)
}

// inside reports whether addr is in data's memory.
func inside(data []byte, addr uintptr) bool {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	return len(data) > 0 && addr >= start && addr < start+uintptr(len(data))
}
