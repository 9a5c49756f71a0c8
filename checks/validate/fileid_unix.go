//go:build linux || darwin

package validate

import (
	"io/fs"
	"syscall"
	"time"
)

// fileIDs says whether this system gives files identities (select cache entries can be checked).
const fileIDs = true

// idOf is the identity of a regular file's content (ok false for anything else).
func idOf(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileID{}, false
	}
	mtime, ctime := statTimes(st)
	return fileID{Dev: int64(st.Dev), Ino: int64(st.Ino), Size: st.Size, Mtime: mtime.Nano(), Ctime: ctime.Nano(),
		Mode: uint32(st.Mode)}, true
}

// changeTime is a file's status change time.
func changeTime(fi fs.FileInfo) (time.Time, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, false
	}
	_, ctime := statTimes(st)
	return time.Unix(0, ctime.Nano()), true
}
