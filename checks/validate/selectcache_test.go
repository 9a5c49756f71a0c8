package validate

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// The select cache cases: each builds a catalog whose full validation fails because bar/catalog.json
// holds a second declaration of package foo, while the change touches only foo/catalog.json. A run that
// trusts a wrong entry for bar/catalog.json ("packages: bar") leaves that file out and passes.

var (
	fooPkg = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v1"}]}
{"schema":"olm.bundle","name":"foo.v1","package":"foo","image":"quay.io/x/foo@sha256:` + strings.Repeat("1", 64) + `","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}}]}
`
	barPkg = strings.ReplaceAll(fooPkg, "foo", "bar")
	// barDup is bar's file with foo declared again, of the same size as barPkg plus dupDecl
	dupDecl = `{"schema":"olm.package","name":"foo"}` + "\n"
	// barPad is bar's file grown by as many bytes as dupDecl, holding nothing of foo
	barPad = barPkg + strings.Repeat(" ", len(dupDecl)-1) + "\n"
)

// dupCatalog is the catalog after the change: foo's description edited (the touched file), bar's file
// declaring foo again (untouched: changed in the work tree, not staged, or before a stale cache).
func dupCatalog() fstest.MapFS {
	return fstest.MapFS{
		"foo/catalog.json": {Data: []byte(strings.Replace(fooPkg, `"defaultChannel"`, `"description":"x","defaultChannel"`, 1))},
		"bar/catalog.json": {Data: []byte(barPkg + dupDecl)},
	}
}

// fooChange is the change: foo/catalog.json edited, as it was before.
func fooChange(c *SelectCache) Change {
	return Change{Files: []string{"foo/catalog.json"}, Cache: c, Before: func(p string) ([]byte, bool, error) {
		if p == "foo/catalog.json" {
			return []byte(fooPkg), true, nil
		}
		return nil, false, nil
	}}
}

// sameAsFull runs the change on src and fails unless its verdict and diagnostics are full validation's
// (which, here, fails with package-duplicate).
func sameAsFull(t *testing.T, src source, ch Change) {
	t.Helper()
	full, err := load(func(lo catalog.LoadOptions) (*catalog.Result, error) { return src.load(t.Context(), lo) }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if full.Valid() || !hasRule(full, "package-duplicate") {
		t.Fatalf("the case is wrong: full validation gives %v", full.Diagnostics)
	}
	inc, _, err := changed(t.Context(), src, ch)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Valid() != full.Valid() || !reflect.DeepEqual(inc.Diagnostics, full.Diagnostics) {
		t.Fatalf("incremental (valid %v) differs from full (valid %v):\nincremental: %v\nfull:        %v",
			inc.Valid(), full.Valid(), inc.Diagnostics, full.Diagnostics)
	}
}

func hasRule(r *Result, rule string) bool {
	return slices.ContainsFunc(r.Diagnostics, func(d diag.Diagnostic) bool { return d.Rule == rule })
}

// lyingPayload is a cache payload for src that says bar/catalog.json holds only bar (with its true identity).
func lyingPayload(t *testing.T, src idSource, dir string) []byte {
	t.Helper()
	files := map[string]cacheEntry{}
	for f, id := range src.ids {
		pkgs := []string{strings.Split(f, "/")[0]}
		files[f] = cacheEntry{ID: id, Pkgs: pkgs}
	}
	data, err := json.Marshal(cachePayload{Dir: dir, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// signed is a cache file holding payload, authenticated with key.
func signed(payload, key []byte) []byte {
	c := &SelectCache{Key: key}
	return []byte(selectCacheMagic + hex.EncodeToString(c.mac(payload)) + "\n" + string(payload))
}

// A cache file that this user's catalogbot did not write for this catalog directory is never believed:
// hand-edited, signed with another key, written for another directory, truncated, corrupted. The last
// case is the control: the same lie, properly signed, is believed (the entries are what a run trusts,
// so the authentication is what keeps a crafted file out).
func TestSelectCacheUntrustedFile(t *testing.T) {
	src := withIDs(dupCatalog(), nil, nil, 1)
	for _, tc := range []struct {
		name string
		file func(c *SelectCache, valid []byte) []byte
	}{
		{"hand-edited entry", func(c *SelectCache, valid []byte) []byte {
			return bytes.Replace(valid, []byte(`"pkgs":["bar","foo"]`), []byte(`"pkgs":["bar"]`), 1)
		}},
		{"signed with another key", func(c *SelectCache, _ []byte) []byte {
			return signed(lyingPayload(t, src, src.dirName()), []byte("another key, another key, anothe"))
		}},
		{"signed with no key", func(c *SelectCache, _ []byte) []byte {
			return signed(lyingPayload(t, src, src.dirName()), nil)
		}},
		{"written for another directory", func(c *SelectCache, _ []byte) []byte {
			return signed(lyingPayload(t, src, "/elsewhere/catalog"), c.Key)
		}},
		{"two payloads, the second a lie", func(c *SelectCache, valid []byte) []byte {
			return append(slices.Clone(valid), lyingPayload(t, src, src.dirName())...)
		}},
		{"truncated", func(c *SelectCache, valid []byte) []byte { return valid[:len(valid)/2] }},
		{"empty", func(*SelectCache, []byte) []byte { return nil }},
		{"larger than any cache", func(c *SelectCache, _ []byte) []byte {
			lie := lyingPayload(t, src, src.dirName())
			pad := bytes.Repeat([]byte(" "), maxCacheFile) // JSON allows trailing spaces: a signed lie, too large to be read
			return signed(append(lie, pad...), c.Key)
		}},
		{"not a cache", func(*SelectCache, []byte) []byte { return []byte("{}\n") }},
		{"a byte flipped", func(c *SelectCache, valid []byte) []byte {
			b := slices.Clone(valid)
			b[len(b)-3] ^= 1
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := testCache(t)
			warm(t, src, c)
			valid, err := os.ReadFile(c.File)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(valid, []byte(`"pkgs":["bar","foo"]`)) {
				t.Fatalf("the warm cache does not say bar's file holds foo:\n%s", valid)
			}
			if err := os.WriteFile(c.File, tc.file(c, valid), 0o600); err != nil {
				t.Fatal(err)
			}
			sameAsFull(t, src, fooChange(c))
		})
	}
	t.Run("control: the lie signed with the user's key", func(t *testing.T) {
		c := testCache(t)
		if err := os.WriteFile(c.File, signed(lyingPayload(t, src, src.dirName()), c.Key), 0o600); err != nil {
			t.Fatal(err)
		}
		inc, _, err := changed(t.Context(), src, fooChange(c))
		if err != nil || !inc.Valid() {
			t.Fatalf("a properly signed entry is not what the run trusts (err %v, %v): the cases above test nothing", err, inc.Diagnostics)
		}
	})
}

// A file whose identity changed since the cache was written is read again, whatever its entry says:
// changed in place (in the work tree, not staged; with or without a change of size), or replaced by a
// rename of another file onto its path.
func TestSelectCacheStaleEntry(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before fstest.MapFS // the catalog the cache was warmed on, foo's file aside
		rename string       // the file renamed onto bar/catalog.json (it keeps its inode)
	}{
		{"edited in place", fstest.MapFS{"bar/catalog.json": {Data: []byte(barPkg)}}, ""},
		{"edited in place, same size", fstest.MapFS{"bar/catalog.json": {Data: []byte(barPad)}}, ""},
		{"another file renamed onto it", fstest.MapFS{"bar/other.json": {Data: []byte(barPkg + dupDecl)}, "bar/catalog.json": {Data: []byte(barPad)}}, "bar/other.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.before["foo/catalog.json"] = &fstest.MapFile{Data: []byte(fooPkg)}
			old := withIDs(tc.before, nil, nil, 1)
			c := testCache(t)
			warm(t, old, c)
			src := withIDs(dupCatalog(), tc.before, old.ids, 2)
			if tc.rename != "" {
				id := old.ids[tc.rename]
				id.Ctime = 2 // a rename changes only the change time
				src.ids["bar/catalog.json"] = id
			}
			sameAsFull(t, src, fooChange(c))
		})
	}
}

// Git's racy-clean rule: a file written within racyMargin of the run may be written again within the
// same timestamp tick, keeping its size and times (and so its identity) with other content. Its entry
// is not written; the control shows that an entry that was written is trusted on identity alone.
func TestSelectCacheRacyClean(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	for _, tc := range []struct {
		name    string
		written time.Time // when bar's file was last written
		trusted bool      // whether its entry is then trusted
	}{
		{"written just before the run", now.Add(-racyMargin / 2), false},
		{"written at the run's start", now, false},
		{"control: written long before", now.Add(-10 * racyMargin), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fstest.MapFS{"foo/catalog.json": {Data: []byte(fooPkg)}, "bar/catalog.json": {Data: []byte(barPad)}}
			ids := map[string]fileID{
				"foo/catalog.json": {Ino: 1, Size: int64(len(fooPkg)), Mtime: 1, Ctime: 1},
				"bar/catalog.json": {Ino: 2, Size: int64(len(barPad)), Mtime: tc.written.UnixNano(), Ctime: tc.written.UnixNano()},
			}
			c := testCache(t)
			c.clock = func() (time.Time, error) { return now, nil }
			if _, err := selectCached(t.Context(), idSource{memSource{before}, ids}, []string{"bar/catalog.json", "foo/catalog.json"},
				nil, nil, c, Limits{}); err != nil {
				t.Fatal(err)
			}
			_, stored := c.read("/mem/catalog")["bar/catalog.json"]
			if stored != tc.trusted {
				t.Fatalf("bar's entry written: %v, want %v", stored, tc.trusted)
			}
			// rewritten in the same tick: same size, same times, foo declared again
			src := idSource{memSource{dupCatalog()}, ids}
			if tc.trusted {
				inc, _, err := changed(t.Context(), src, fooChange(c))
				if err != nil || !inc.Valid() {
					t.Fatalf("control: the stored entry was not trusted (err %v, %v)", err, inc.Diagnostics)
				}
				return
			}
			sameAsFull(t, src, fooChange(c))
		})
	}
}

// On a real file system, with the real clock: the cache is written once the files are older than
// racyMargin; then a rewrite of bar's file keeping its size and modification time (only the change time
// tells), and a swap of two files of the same size and times by renames (the inodes and change times
// tell) are both seen.
func TestSelectCacheOnDisk(t *testing.T) {
	if !fileIDs {
		t.Skip("no file identities on this system")
	}
	bazPad := strings.ReplaceAll(barPad, "bar", "baz")
	type disk struct {
		dir string
		src dirSource
		c   *SelectCache
	}
	write := func(t *testing.T, d disk, p, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(d.dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d.dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var disks []disk
	for range 2 {
		d := disk{dir: t.TempDir()}
		root, err := os.OpenRoot(d.dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		d.src = dirSource{dir: d.dir, root: root}
		d.c = &SelectCache{File: filepath.Join(t.TempDir(), "select"), Key: []byte("0123456789abcdef0123456789abcdef")}
		write(t, d, "foo/catalog.json", string(dupCatalog()["foo/catalog.json"].Data))
		write(t, d, "bar/catalog.json", barPad)
		write(t, d, "baz/catalog.json", bazPad)
		disks = append(disks, d)
	}
	select { // let the files' times fall out of the racy window
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(racyMargin + 200*time.Millisecond):
	}
	for _, d := range disks {
		files, _, err := catalogFileList(t.Context(), d.src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := selectCached(t.Context(), d.src, files, nil, nil, d.c, Limits{}); err != nil {
			t.Fatal(err)
		}
		if n := len(d.c.read(d.src.dirName())); n != 3 {
			t.Fatalf("the cache has %d entries, want 3", n)
		}
	}
	t.Run("rewritten keeping size and modification time", func(t *testing.T) {
		d := disks[0]
		p := filepath.Join(d.dir, "bar/catalog.json")
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		write(t, d, "bar/catalog.json", barPkg+dupDecl)
		if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
			t.Fatal(err)
		}
		if st2, err := os.Stat(p); err != nil || st2.Size() != st.Size() || !st2.ModTime().Equal(st.ModTime()) {
			t.Fatalf("the rewrite changed the size or the modification time (%v)", err)
		}
		sameAsFull(t, d.src, fooChange(d.c))
	})
	t.Run("two files swapped by renames", func(t *testing.T) {
		d := disks[1]
		bar, baz, tmp := filepath.Join(d.dir, "bar/catalog.json"), filepath.Join(d.dir, "baz/catalog.json"), filepath.Join(d.dir, "tmp")
		st, err := os.Stat(bar)
		if err != nil {
			t.Fatal(err)
		}
		// baz's file now declares foo again (it is read again: its identity changed), then the two
		// files, of one size and one modification time, trade places
		write(t, d, "baz/catalog.json", strings.ReplaceAll(barPkg, "bar", "baz")+dupDecl)
		for _, step := range [][2]string{{bar, tmp}, {baz, bar}, {tmp, baz}} {
			if err := os.Chtimes(step[0], st.ModTime(), st.ModTime()); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(step[0], step[1]); err != nil {
				t.Fatal(err)
			}
		}
		sameAsFull(t, d.src, fooChange(d.c))
	})
}

// Changed tells the front-end the catalog's size before loading anything, whichever way it then goes
// (with or without a cache, or validating the whole catalog), so the CLI's memory bound follows the input.
func TestChangedSized(t *testing.T) {
	fsys := dupCatalog()
	fsys["bar/.indexignore"] = &fstest.MapFile{Data: []byte("notes.txt\n")}
	fsys["bar/notes.txt"] = &fstest.MapFile{Data: []byte("not catalog content")}
	want := int64(len(fsys["foo/catalog.json"].Data) + len(fsys["bar/catalog.json"].Data))
	for _, tc := range []struct {
		name  string
		src   source
		files []string
		cache *SelectCache
	}{
		{"no cache", memSource{fsys}, []string{"foo/catalog.json"}, nil},
		{"cache", withIDs(fsys, nil, nil, 1), []string{"foo/catalog.json"}, testCache(t)},
		{"whole catalog", memSource{fsys}, []string{"bar/.indexignore"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int64
			ch := fooChange(tc.cache)
			ch.Files = tc.files
			ch.Sized = func(n int64) { got = append(got, n) }
			if _, _, err := changed(t.Context(), tc.src, ch); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, []int64{want}) {
				t.Errorf("Sized was told %v, want once the %d bytes of the catalog's files", got, want)
			}
		})
	}
}
