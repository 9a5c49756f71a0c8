package validate

import "syscall"

// statTimes are a file's modification and status change times, as Linux names them in its Stat_t.
func statTimes(st *syscall.Stat_t) (mtime, ctime syscall.Timespec) { return st.Mtim, st.Ctim }
