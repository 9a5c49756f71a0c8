package validate

import "syscall"

// statTimes are a file's modification and status change times, as Darwin names them in its Stat_t.
func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtimespec, st.Ctimespec }
