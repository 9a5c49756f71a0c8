package validate

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Change is what a change did to a catalog directory: the files it touched (added, modified or deleted;
// slash paths relative to the directory) and, for those that existed before, their content before.
type Change struct {
	Files []string
	// Before returns a touched file's content before the change; ok is false when it did not exist.
	Before func(path string) (data []byte, ok bool, err error)
	// Limits bound the validation as in Options.
	Limits Limits
	// Cache, when set, remembers between runs which packages each file holds (see SelectCache).
	Cache *SelectCache
	// Sized, when set, is told the total size of the catalog's files once they are listed, before any
	// of them is loaded (the CLI bounds its memory by it).
	Sized func(bytes int64)
	// Dir is where the catalog is in the repository, as in Options.
	Dir diag.Dir
}

// Changed validates only the packages a change touched, by package identity, not by directory: every
// package named by a blob of a touched file, before or after the change, is validated with all of its
// blobs, wherever they live (see selectFiles). Its verdict and diagnostics are those of validating the
// whole catalog whenever the catalog was valid before the change; it falls back to the whole catalog
// when it cannot tell a change's packages safely (a touched .indexignore, a file that did not load before
// the change; without a select cache, a package name that could hide in an escape), and reports whether
// it fell back. With ch.Cache, a file whose identity the cache knows is not read (see SelectCache); the
// others are parsed and remembered.
func Changed(ctx context.Context, dir string, ch Change) (*Result, bool, error) {
	src := dirSource{dir: dir}
	if root, err := os.OpenRoot(dir); err == nil { // opened once for every quick look; else load reports it
		defer root.Close()
		src.root = root
	}
	return changed(ctx, src, ch)
}

// source is a catalog directory as Changed reads it: loads, and reads of single files.
type source interface {
	load(ctx context.Context, lo catalog.LoadOptions) (*catalog.Result, error)
	// open opens a catalog file for the selection's quick look; it need not follow what load follows.
	open(path string) (fs.File, error)
}

type dirSource struct {
	dir  string
	root *os.Root // nil when dir cannot be opened (the load then says why)
}

func (d dirSource) load(ctx context.Context, lo catalog.LoadOptions) (*catalog.Result, error) {
	return catalog.LoadDir(ctx, d.dir, lo)
}

func (d dirSource) stat(p string) (fileID, bool) {
	// a plain lstat (one system call, not one per path element as through the root): the listing holds
	// no symlinked directory, and an identity only ever says "read this file again" or "known"
	fi, err := os.Lstat(filepath.Join(d.dir, filepath.FromSlash(p)))
	if err != nil {
		return fileID{}, false
	}
	return idOf(fi)
}

func (d dirSource) dirName() string {
	abs, err := filepath.Abs(d.dir)
	if err != nil {
		return d.dir
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

func (d dirSource) open(p string) (fs.File, error) {
	if d.root == nil {
		return nil, fmt.Errorf("open catalog directory %s", d.dir)
	}
	return d.root.Open(p)
}

func changed(ctx context.Context, src source, ch Change) (*Result, bool, error) {
	full := func() (*Result, bool, error) {
		res, err := load(func(lo catalog.LoadOptions) (*catalog.Result, error) { return src.load(ctx, lo) }, Options{Limits: ch.Limits, Dir: ch.Dir})
		return res, true, err
	}
	if len(ch.Files) == 0 {
		return &Result{}, false, nil
	}
	files, refused, err := catalogFileList(ctx, src)
	if err != nil {
		return nil, false, err
	}
	if refused {
		return full() // the whole validation lists the directory, and reports what it refuses
	}
	total := catalogBytes(src, files)
	if ch.Sized != nil {
		ch.Sized(total)
	}
	if wholeIsCheaper(total, catalogBytes(src, ch.Files)) {
		return full()
	}
	touched := map[string]bool{}
	for _, f := range ch.Files {
		if path.Base(f) == catalog.IndexIgnore || ch.Before == nil {
			return full() // the set of catalog files itself changed, or there is no before to compare with
		}
		touched[f] = true
	}
	// The packages the change touches are those of the touched files before it (read from git) and now:
	// both are read and loaded at once, each on its own core.
	var old, cur touchedPackages
	var wg sync.WaitGroup
	wg.Go(func() { old = loadBefore(ctx, ch) })
	cur = loadNow(ctx, src, touched)
	wg.Wait()
	pkgs := map[string]bool{}
	for _, side := range []touchedPackages{old, cur} {
		switch {
		case side.err != nil:
			return nil, false, side.err
		case side.full:
			return full()
		case side.cat != nil:
			addPackages(pkgs, side.cat)
		}
	}
	var include map[string]bool
	if ss, ok := src.(statSource); ok && fileIDs && ch.Cache != nil && len(ch.Cache.Key) > 0 {
		include, err = selectCached(ctx, ss, files, touched, pkgs, ch.Cache, ch.Limits)
	} else {
		for p := range pkgs {
			if !searchable(p) {
				return full()
			}
		}
		include, err = selectFiles(ctx, src, files, touched, pkgs)
	}
	if err != nil {
		return nil, false, err
	}
	if files == nil {
		files = []string{} // listed: an empty catalog is not listed again
	}
	res, err := load(func(lo catalog.LoadOptions) (*catalog.Result, error) { lo.Files = files; return src.load(ctx, lo) },
		Options{Include: func(p string) bool { return include[p] }, Packages: pkgs, Limits: ch.Limits, Dir: ch.Dir})
	return res, false, err
}

// touchedPackages is one side of a change, the touched files' catalog before or after it: full says the
// whole catalog must be validated instead.
type touchedPackages struct {
	cat  *catalog.Catalog
	full bool
	err  error
}

// loadBefore loads the touched files as they were before the change. A file that did not exist adds
// nothing; one whose old content has an error may have named a package the load cannot see (full).
func loadBefore(ctx context.Context, ch Change) touchedPackages {
	before := fstest.MapFS{}
	for _, f := range ch.Files {
		data, ok, err := ch.Before(f)
		if err != nil {
			return touchedPackages{err: err}
		}
		if ok {
			before[f] = &fstest.MapFile{Data: data}
		}
	}
	if len(before) == 0 {
		return touchedPackages{}
	}
	old, err := catalog.LoadFS(ctx, before, catalog.LoadOptions{Lean: true})
	if err != nil {
		return touchedPackages{err: err}
	}
	if diag.HasErrors(old.Diagnostics) {
		return touchedPackages{full: true}
	}
	return touchedPackages{cat: old.Catalog}
}

// loadNow loads the touched files as they are now (a file the load would not read only adds packages;
// one that cannot be read plainly is left to the whole validation).
func loadNow(ctx context.Context, src source, touched map[string]bool) touchedPackages {
	now := fstest.MapFS{}
	for f := range touched {
		data, ok := readPlain(src, f)
		if !ok {
			return touchedPackages{full: true}
		}
		if data != nil {
			now[f] = &fstest.MapFile{Data: data}
		}
	}
	cur, err := catalog.LoadFS(ctx, now, catalog.LoadOptions{Lean: true})
	if err != nil {
		return touchedPackages{err: err}
	}
	return touchedPackages{cat: cur.Catalog}
}

// An incremental run loads the changed files up to three times (before the change and after it, at once,
// one worker each, then in the final load) and reads their before versions from git; the whole catalog is
// loaded once, by every worker. So where the changed files are an eighth of a catalog of a few megabytes
// or more (community-operators-prod-v4.16 has one 3.5 MB package file in 20 MB: 69 ms incrementally
// against 59-63 ms whole, 2026-11-27, with --staged and git), the whole catalog is validated instead,
// before any before version is read; below minIncrementalBytes either takes milliseconds.
const minIncrementalBytes = 4 << 20

func wholeIsCheaper(total, changed int64) bool {
	return total >= minIncrementalBytes && changed*8 >= total
}

// catalogBytes is the total size of files, from their identities where the source gives them.
func catalogBytes(src source, files []string) int64 {
	var total int64
	ss, ids := src.(statSource)
	for _, f := range files {
		if ids {
			if id, ok := ss.stat(f); ok {
				total += id.Size
				continue
			}
		}
		if fh, err := src.open(f); err == nil {
			if st, err := fh.Stat(); err == nil {
				total += st.Size()
			}
			fh.Close()
		}
	}
	return total
}

// Summary describes a result in one line.
func (r *Result) Summary() string {
	if r.Catalog == nil {
		return "nothing to validate"
	}
	c := r.Catalog
	errs := diag.TruncatedCount(r.Truncated, diag.Error)
	for _, d := range r.Diagnostics {
		if d.Severity == diag.Error {
			errs++
		}
	}
	return plural(len(r.Files), "file") + ", " + plural(len(c.Packages), "package") + ", " + plural(len(c.Channels), "channel") +
		", " + plural(len(c.Bundles), "bundle") + ": " + plural(errs, "error")
}

func plural(n int, what string) string {
	s := itoa(n) + " " + what
	if n != 1 {
		s += "s"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }
