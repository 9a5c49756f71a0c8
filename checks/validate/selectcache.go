package validate

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
)

// SelectCache is where Changed remembers, between runs, which packages the blobs of each catalog file
// belong to, so that one changed package is validated without reading every other file. An entry is
// keyed by the file's path and the identity the file system gives it for free (device, inode, size,
// modification and change times, mode: what git's index compares); a file whose identity differs, or that
// has no entry, is read and parsed again. The cache never decides alone:
//   - the file is authenticated with an HMAC under Key, a secret of the user's kept outside the
//     repository (CacheKey), so a corrupted, truncated, hand-edited or copied cache is ignored whole;
//   - an entry is only written for a file whose times are older than the run's start by racyMargin (git's
//     racy-clean rule): a file rewritten within the same timestamp tick keeps its times and size, and
//     would otherwise be taken for the content that was parsed;
//   - a file that is not a regular file (a symlink) or whose identity cannot be read is always parsed.
type SelectCache struct {
	// File is the cache file, under the repository's git directory (it is the user's own, never shared).
	File string
	// Key authenticates File (CacheKey).
	Key []byte
	// clock returns the current time on the catalog's file system (tests fake it); nil: fsClock.
	clock func() (time.Time, error)
}

// racyMargin is how much older than the run's start a file's times must be for its entry to be written:
// more than the coarsest timestamp granularity of common file systems (2 s for FAT's mtime) and the
// kernel clock's tick.
const racyMargin = 2 * time.Second

// maxCacheFile is the largest cache file read (a few hundred bytes per catalog file: far more than
// any real catalog needs); a larger one is ignored.
const maxCacheFile = 64 << 20

// selectCacheMagic starts every cache file; a cache of another format is ignored.
const selectCacheMagic = "catalogbot select cache v1\n"

// fileID is the identity of a file's content as the file system gives it without reading it: any write
// changes the change time (which no one but the clock sets), and a rename or replacement changes the inode.
type fileID struct {
	Dev, Ino, Size, Mtime, Ctime int64
	Mode                         uint32
}

// older reports whether both of the file's times are before t.
func (id fileID) older(t time.Time) bool {
	return id.Mtime < t.UnixNano() && id.Ctime < t.UnixNano()
}

// cacheEntry is what the cache knows of one file: the packages its blobs belong to, or Any when it did
// not load cleanly (it is then always selected, for the load to report).
type cacheEntry struct {
	ID   fileID   `json:"id"`
	Pkgs []string `json:"pkgs,omitempty"`
	Any  bool     `json:"any,omitempty"`
}

func (e cacheEntry) selects(pkgs map[string]bool) bool {
	if e.Any {
		return true
	}
	for _, p := range e.Pkgs {
		if pkgs[p] {
			return true
		}
	}
	return false
}

// cachePayload is the authenticated content of a cache file.
type cachePayload struct {
	Dir   string                `json:"dir"` // the catalog directory the cache is for
	Files map[string]cacheEntry `json:"files"`
}

// statSource is a source whose files have identities.
type statSource interface {
	source
	// stat returns the identity of a regular catalog file (ok false for anything else, or on an error).
	stat(path string) (id fileID, ok bool)
	// dirName names the catalog directory in the cache (its absolute path).
	dirName() string
}

// CacheKey returns the select cache's key stored at file, creating it (32 random bytes, mode 0600) when
// it does not exist.
func CacheKey(file string) ([]byte, error) {
	key, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, fmt.Errorf("select cache key: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return nil, fmt.Errorf("select cache key: %w", err)
		}
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			return CacheKey(file) // another run created it first
		}
		if err != nil {
			return nil, fmt.Errorf("select cache key: %w", err)
		}
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(file)
			return nil, fmt.Errorf("select cache key %s: %w", file, werr)
		}
		return key, nil
	}
	if err != nil {
		return nil, fmt.Errorf("select cache key: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("select cache key %s: %d bytes, want 32 (delete it to make a new one)", file, len(key))
	}
	return key, nil
}

// mac authenticates a payload for the catalog directory dir.
func (c *SelectCache) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, c.Key)
	m.Write([]byte(selectCacheMagic))
	m.Write(payload)
	return m.Sum(nil)
}

// read returns the cache's entries for dir; nil when there is no cache, or when it is not one this user's
// catalogbot wrote for dir (whatever is wrong with it, it is simply rebuilt).
func (c *SelectCache) read(dir string) map[string]cacheEntry {
	if len(c.Key) == 0 {
		return nil
	}
	f, err := os.Open(c.File)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCacheFile+1))
	if err != nil || len(data) > maxCacheFile {
		return nil
	}
	rest, ok := bytes.CutPrefix(data, []byte(selectCacheMagic))
	if !ok {
		return nil
	}
	sum, payload, ok := bytes.Cut(rest, []byte("\n"))
	want := make([]byte, hex.EncodedLen(sha256.Size))
	hex.Encode(want, c.mac(payload))
	if !ok || !hmac.Equal(sum, want) {
		return nil
	}
	var p cachePayload
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.Dir != dir || dec.More() {
		return nil
	}
	return p.Files
}

// write replaces the cache with entries (atomically: a concurrent run reads the old or the new one).
func (c *SelectCache) write(dir string, entries map[string]cacheEntry) error {
	payload, err := json.Marshal(cachePayload{Dir: dir, Files: entries})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(selectCacheMagic)
	buf.WriteString(hex.EncodeToString(c.mac(payload)))
	buf.WriteByte('\n')
	buf.Write(payload)
	return filetree.WriteCacheFile(c.File, 0o700, buf.Bytes())
}

// now is the time on the catalog's file system, the earlier of the system clock and the change time of a
// file just created beside the cache (the file system's own clock, which git's racy rule also uses).
func (c *SelectCache) now() (time.Time, error) {
	if c.clock != nil {
		return c.clock()
	}
	now := time.Now()
	if err := os.MkdirAll(filepath.Dir(c.File), 0o700); err != nil {
		return time.Time{}, err
	}
	f, err := os.CreateTemp(filepath.Dir(c.File), ".clock-*")
	if err != nil {
		return time.Time{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	if t, ok := changeTime(st); ok && t.Before(now) {
		now = t
	}
	return now, nil
}

// selectCached is selectFiles with a SelectCache: the catalog files (files) that hold a blob of one of pkgs, or
// that did not load cleanly, plus the touched ones. A file the cache knows by its current identity is
// not read; the others are loaded (lean) to learn their packages, and remembered when old enough.
func selectCached(ctx context.Context, src statSource, files []string, touched, pkgs map[string]bool, c *SelectCache, lim Limits) (map[string]bool, error) {
	dir := src.dirName()
	old := c.read(dir)
	next := map[string]cacheEntry{}
	include := map[string]bool{}
	var stale []string
	for _, f := range files {
		id, ok := src.stat(f)
		e, hit := old[f]
		hit = hit && ok && e.ID == id
		if hit {
			next[f] = e
		}
		switch {
		case touched[f]:
			include[f] = true
		case hit:
			if e.selects(pkgs) {
				include[f] = true
			}
		default:
			stale = append(stale, f)
		}
	}
	if len(stale) > 0 {
		if err := refresh(ctx, src, c, stale, pkgs, lim, include, next); err != nil {
			return nil, err
		}
	}
	if !maps.EqualFunc(old, next, func(a, b cacheEntry) bool {
		return a.ID == b.ID && a.Any == b.Any && slices.Equal(a.Pkgs, b.Pkgs)
	}) {
		_ = c.write(dir, next) // a cache that cannot be written costs time, never a verdict
	}
	return include, nil
}

// refresh loads the stale files, selects those of pkgs (or not loading cleanly) into include, and puts
// the entries of those old enough to be trusted into next.
func refresh(ctx context.Context, src statSource, c *SelectCache, stale []string, pkgs map[string]bool, lim Limits,
	include map[string]bool, next map[string]cacheEntry) error {
	start, clockErr := c.now()
	// identities are read after the clock: a write after this point gives the file a change time
	// past start - racyMargin, so an entry written for the content parsed below never matches it
	ids := map[string]fileID{}
	for _, f := range stale {
		if id, ok := src.stat(f); ok {
			ids[f] = id
		}
	}
	unclean := map[string]bool{}
	global := false
	sink := diag.NewLimiter(0)
	sink.Observe(func(d diag.Diagnostic) { // called under the limiter's lock
		if d.File == "" {
			global = true
		}
		unclean[d.File] = true
	})
	sink.Filter(func(diag.Diagnostic) bool { return false })
	want := map[string]bool{}
	for _, f := range stale {
		want[f] = true
	}
	res, err := src.load(ctx, catalog.LoadOptions{Lean: true, Files: stale, Include: func(p string) bool { return want[p] },
		MaxFileSize: lim.MaxFileBytes, MaxTotalSize: lim.MaxTotalBytes, Diagnostics: sink})
	if err != nil {
		return err
	}
	byFile := packagesByFile(res.Catalog)
	if _, unplaced := byFile[""]; unplaced {
		global = true // a blob the loader did not place in a file: no file can be left out for it
	}
	for _, f := range stale {
		e := cacheEntry{Pkgs: byFile[f], Any: unclean[f] || global || res.Refused}
		if e.selects(pkgs) {
			include[f] = true
		}
		id, ok := ids[f]
		if ok && clockErr == nil && !global && !res.Refused && id.older(start.Add(-racyMargin)) {
			e.ID = id
			next[f] = e
		} else {
			delete(next, f)
		}
	}
	return nil
}

// packagesByFile lists, per file, the packages its blobs belong to (sorted, once each).
func packagesByFile(c *catalog.Catalog) map[string][]string {
	sets := map[string]map[string]bool{}
	for pkg, pos := range c.Blobs() {
		if pkg == "" {
			continue
		}
		if sets[pos.File] == nil {
			sets[pos.File] = map[string]bool{}
		}
		sets[pos.File][pkg] = true
	}
	out := map[string][]string{}
	for f, s := range sets {
		out[f] = slices.Sorted(maps.Keys(s))
	}
	return out
}

// catalogFileList lists the catalog's files as a load reads them (after .indexignore), without reading them;
// refused says the listing refused an entry (a symbolic link, a look-alike name: only a whole validation,
// which lists the directory itself, reports it).
func catalogFileList(ctx context.Context, src source) (files []string, refused bool, err error) {
	res, err := src.load(ctx, catalog.LoadOptions{Include: func(p string) bool {
		files = append(files, p)
		return false
	}})
	if err != nil {
		return nil, false, err
	}
	for _, d := range res.Diagnostics {
		refused = refused || d.Rule == catalog.RuleRefused
	}
	return files, refused, nil
}
