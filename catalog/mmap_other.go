//go:build !linux

package catalog

import "io/fs"

// canMap says whether large files are mapped instead of read (see fileLoader.load): here they are read.
const canMap = false

func mapFile(fs.File, int64) ([]byte, bool) { return nil, false }

func unmapFile([]byte) {}

func dropPages([]byte) {}

// openNoWait is the open flag that keeps opening a named pipe from waiting for a writer (see rootFS.open).
const openNoWait = 0
