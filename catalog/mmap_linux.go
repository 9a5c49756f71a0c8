package catalog

import (
	"io/fs"
	"os"
	"syscall"
)

// canMap says whether large files are mapped instead of read (see fileLoader.load).
const canMap = true

// mapFile maps the size bytes of f read-only, when f is an operating system file; ok false means "read it".
func mapFile(f fs.File, size int64) (data []byte, ok bool) {
	of, isOS := f.(*os.File)
	if !isOS || size <= 0 || int64(int(size)) != size {
		return nil, false
	}
	data, err := syscall.Mmap(int(of.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return data, true
}

// unmapFile ends a mapping of mapFile.
func unmapFile(data []byte) { _ = syscall.Munmap(data) }

// dropPages gives back the memory of page-aligned data (part of a mapping of mapFile): the process no
// longer counts it, and the next read of it reads the file again.
func dropPages(data []byte) { _ = syscall.Madvise(data, syscall.MADV_DONTNEED) }

// openNoWait is the open flag that keeps opening a named pipe from waiting for a writer (see rootFS.open).
const openNoWait = syscall.O_NONBLOCK
