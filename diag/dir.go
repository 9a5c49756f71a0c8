package diag

import (
	"path"
	"sync"
)

// Dir is where the files a load or a check reads are in the repository: the slash path, relative to the
// repository's top, that each diagnostic it makes names its file under (Dir.File), so its paths are
// right as they are made and nobody rewrites them after. The zero Dir names files as they are.
type Dir struct {
	get func() string // nil: none
}

// DirOf is the directory dir ("" and "." are the zero Dir).
func DirOf(dir string) Dir {
	if dir == "" || dir == "." {
		return Dir{}
	}
	return Dir{get: func() string { return dir }}
}

// LazyDir is the directory resolve finds, asked once, when a diagnostic first names a file: a run whose
// diagnostics name none never asks (the command line's repository-relative paths cost a git process).
func LazyDir(resolve func() string) Dir {
	return Dir{get: sync.OnceValue(resolve)}
}

// Sub is the directory sub (a slash path) inside d.
func (d Dir) Sub(sub string) Dir {
	if d.get == nil {
		return DirOf(sub)
	}
	if sub == "" || sub == "." {
		return d
	}
	return Dir{get: func() string { return path.Join(d.get(), sub) }}
}

// File is the file rel (a slash path relative to d) as a diagnostic names it: under d, or "" for none.
func (d Dir) File(rel string) string {
	if rel == "" || d.get == nil {
		return rel
	}
	dir := d.get()
	if dir == "" || dir == "." {
		return rel
	}
	return path.Join(dir, rel)
}
