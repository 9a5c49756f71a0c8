package validate

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
)

// memSource is a catalog directory in memory, for the differential test.
type memSource struct{ fsys fstest.MapFS }

func (m memSource) load(ctx context.Context, lo catalog.LoadOptions) (*catalog.Result, error) {
	return catalog.LoadFS(ctx, m.fsys, lo)
}
func (m memSource) open(p string) (fs.File, error) { return m.fsys.Open(p) }

// idSource is a memSource whose files have identities, as a file system that changes a file's identity
// on every write gives them: ids holds each path's identity (tests change it with the content, or on
// purpose do not).
type idSource struct {
	memSource
	ids map[string]fileID
}

func (s idSource) stat(p string) (fileID, bool) {
	id, ok := s.ids[p]
	return id, ok
}

func (s idSource) dirName() string { return "/mem/catalog" }

// withIDs gives every file of after an identity: its identity in before (prev) when its content is the
// same, else a new one (generation gen).
func withIDs(after fstest.MapFS, before fstest.MapFS, prev map[string]fileID, gen int64) idSource {
	ids := map[string]fileID{}
	for f, mf := range after {
		if b, ok := before[f]; ok && string(b.Data) == string(mf.Data) && prev != nil {
			ids[f] = prev[f]
			continue
		}
		ids[f] = fileID{Ino: int64(len(f)), Size: int64(len(mf.Data)), Mtime: gen, Ctime: gen, Mode: 0o644}
	}
	return idSource{memSource{after}, ids}
}

// testCache is a select cache in a test's temporary directory whose clock says every file is old enough
// to be remembered (tests of the racy rule set their own clock).
func testCache(t testing.TB) *SelectCache {
	return &SelectCache{File: t.TempDir() + "/select", Key: []byte("0123456789abcdef0123456789abcdef"),
		clock: func() (time.Time, error) { return time.Unix(0, 1<<62), nil }}
}

// warm fills c with an entry for every file of src.
func warm(t testing.TB, src idSource, c *SelectCache) {
	t.Helper()
	files, _, err := catalogFileList(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := selectCached(t.Context(), src, files, nil, nil, c, Limits{}); err != nil {
		t.Fatal(err)
	}
	if n := len(c.read(src.dirName())); n != len(files) {
		t.Fatalf("warm: the cache has %d entries for %d files", n, len(files))
	}
}

// randCatalog is a small valid catalog whose blobs are spread over files in several directories, some
// JSON, some YAML, some holding blobs of several packages.
type randCatalog struct {
	r     *rand.Rand
	files map[string][]string // path -> blobs (each one JSON object, or one YAML document)
}

var dirs = []string{"a", "b", "c", "a/x", "shared"}

func (c *randCatalog) file() string {
	d := dirs[c.r.IntN(len(dirs))]
	ext := []string{".json", ".yaml"}[c.r.IntN(2)]
	return fmt.Sprintf("%s/f%d%s", d, c.r.IntN(4), ext)
}

func (c *randCatalog) put(blob string) {
	f := c.file()
	if c.r.IntN(5) == 0 {
		blob = escapePackage(blob, strings.HasSuffix(f, ".yaml") && c.r.IntN(2) == 0)
	}
	c.files[f] = append(c.files[f], blob)
}

// escapePackage spells the first character of a blob's package (or an olm.package's name) as an escape:
// \u00XX, or YAML's \xXX.
func escapePackage(blob string, yamlX bool) string {
	for _, key := range []string{`"package":"`, `"schema":"olm.package","name":"`} {
		if i := strings.Index(blob, key); i >= 0 {
			j := i + len(key)
			esc := fmt.Sprintf(`\u%04x`, blob[j])
			if yamlX {
				esc = fmt.Sprintf(`\x%02x`, blob[j])
			}
			return blob[:j] + esc + blob[j+1:]
		}
	}
	return blob
}

func newRandCatalog(r *rand.Rand) *randCatalog {
	c := &randCatalog{r: r, files: map[string][]string{}}
	// "ab" contains "a" and "b": selection by bytes must not confuse them
	for _, p := range []string{"a", "b", "ab", "etcd"}[:1+r.IntN(4)] {
		c.put(fmt.Sprintf(`{"schema":"olm.package","name":%q,"defaultChannel":"stable"}`, p))
		n := 1 + r.IntN(3)
		var entries []string
		for v := 1; v <= n; v++ {
			e := fmt.Sprintf(`{"name":"%s.v%d"`, p, v)
			if v > 1 {
				e += fmt.Sprintf(`,"replaces":"%s.v%d"`, p, v-1)
			}
			entries = append(entries, e+"}")
			c.put(fmt.Sprintf(`{"schema":"olm.bundle","name":"%s.v%d","package":%q,"image":"quay.io/x/%s@sha256:%064d","properties":[{"type":"olm.package","value":{"packageName":%q,"version":"%d.0.0"}}]}`,
				p, v, p, p, v, p, v))
		}
		c.put(fmt.Sprintf(`{"schema":"olm.channel","name":"stable","package":%q,"entries":[%s]}`, p, strings.Join(entries, ",")))
	}
	return c
}

func (c *randCatalog) fs() fstest.MapFS {
	m := fstest.MapFS{}
	for f, blobs := range c.files {
		if len(blobs) == 0 {
			continue
		}
		sep := "\n"
		if strings.HasSuffix(f, ".yaml") {
			sep = "\n---\n" // JSON is YAML: one document per blob
		}
		m[f] = &fstest.MapFile{Data: []byte(strings.Join(blobs, sep) + "\n")}
	}
	return m
}

func (c *randCatalog) paths() []string {
	var ps []string
	for f, blobs := range c.files {
		if len(blobs) > 0 {
			ps = append(ps, f)
		}
	}
	slices.Sort(ps)
	return ps
}

// edit makes one random edit of the kinds a contributor makes (or a hostile one crafts).
func (c *randCatalog) edit() {
	ps := c.paths()
	if len(ps) == 0 {
		return
	}
	f := ps[c.r.IntN(len(ps))]
	blobs := c.files[f]
	i := c.r.IntN(len(blobs))
	switch c.r.IntN(9) {
	case 0: // delete a file (a package directory, or part of one)
		delete(c.files, f)
	case 1: // move a file to another directory (or rename it)
		to := c.file()
		delete(c.files, f)
		c.files[to] = append(c.files[to], blobs...)
	case 2: // delete one blob
		c.files[f] = slices.Delete(slices.Clone(blobs), i, i+1)
	case 3: // move one blob to another file
		c.files[f] = slices.Delete(slices.Clone(blobs), i, i+1)
		c.put(blobs[i])
	case 4: // declare a package again from another file
		c.put(fmt.Sprintf(`{"schema":"olm.package","name":%q}`, []string{"a", "b", "ab", "etcd", "new"}[c.r.IntN(5)]))
	case 5: // an orphan channel of some package in another file
		c.put(fmt.Sprintf(`{"schema":"olm.channel","name":"beta","package":%q,"entries":[{"name":"x.v1"}]}`, []string{"a", "b", "ab", "etcd"}[c.r.IntN(4)]))
	case 6: // rename the package a blob belongs to
		c.files[f] = slices.Clone(blobs)
		c.files[f][i] = strings.Replace(blobs[i], `"package":"`, `"package":"n`, 1)
	case 7: // spell a package name with escapes, as JSON and YAML allow
		c.files[f] = slices.Clone(blobs)
		c.files[f][i] = strings.NewReplacer(`"package":"a"`, `"package":"\u0061"`, `"package":"etcd"`, `"package":"e\u0074cd"`,
			`"name":"b"`, `"name":"\u0062"`).Replace(blobs[i])
	case 8: // break a bundle's channel entry
		c.files[f] = slices.Clone(blobs)
		c.files[f][i] = strings.Replace(blobs[i], `{"name":"`, `{"name":"gone-`, 1)
	}
}

// TestIncrementalMatchesFull is the differential test of incremental against full validation: over
// thousands of random small catalogs, valid before a change of random edits, validating only what the
// change touched (as validate --staged and --changed-since do) gives exactly the verdict and the
// diagnostics of validating the whole catalog: without a select cache, with a cold one, and with one
// warmed on the catalog before the change.
func TestIncrementalMatchesFull(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 300
	}
	ctx := context.Background()
	seed := uint64(os.Getpid())
	fails, fallbacks := 0, 0
	for iter := range n {
		r := rand.New(rand.NewPCG(seed, uint64(iter)))
		c := newRandCatalog(r)
		before := c.fs()
		// the warm cache is filled on an older state of the catalog (other random edits away from
		// before): its entries of the files that changed since are stale, though the change does not
		// touch them
		o := &randCatalog{r: r, files: map[string][]string{}}
		for f, blobs := range c.files {
			o.files[f] = slices.Clip(blobs)
		}
		for range r.IntN(3) {
			o.edit()
		}
		older := o.fs()
		olderIDs := withIDs(older, nil, nil, 0)
		base, err := load(func(lo catalog.LoadOptions) (*catalog.Result, error) { return catalog.LoadFS(ctx, before, lo) }, Options{})
		if err != nil || !base.Valid() {
			t.Fatalf("seed %d/%d: the random base catalog is invalid: %v %v", seed, iter, err, base.Diagnostics)
		}
		for range 1 + r.IntN(3) {
			c.edit()
		}
		after := c.fs()
		var touched []string
		for f, mf := range before {
			if a, ok := after[f]; !ok || string(a.Data) != string(mf.Data) {
				touched = append(touched, f)
			}
		}
		for f := range after {
			if _, ok := before[f]; !ok {
				touched = append(touched, f)
			}
		}
		src := memSource{after}
		full, err := load(func(lo catalog.LoadOptions) (*catalog.Result, error) { return src.load(ctx, lo) }, Options{})
		if err != nil {
			t.Fatal(err)
		}
		ch := Change{Files: touched, Before: func(p string) ([]byte, bool, error) {
			if mf, ok := before[p]; ok {
				return mf.Data, true, nil
			}
			return nil, false, nil
		}}
		beforeIDs := withIDs(before, older, olderIDs.ids, 1)
		cold, warmed := testCache(t), testCache(t)
		warm(t, olderIDs, warmed)
		for _, v := range []struct {
			name  string
			src   source
			cache *SelectCache
		}{
			{"no cache", src, nil},
			{"cold cache", withIDs(after, before, beforeIDs.ids, 2), cold},
			{"warm cache", withIDs(after, before, beforeIDs.ids, 2), warmed},
		} {
			ch.Cache = v.cache
			inc, fellBack, err := changed(ctx, v.src, ch)
			if err != nil {
				t.Fatal(err)
			}
			if fellBack && v.cache == nil {
				fallbacks++
			}
			if inc.Valid() != full.Valid() || (len(inc.Diagnostics)+len(full.Diagnostics) > 0 && !reflect.DeepEqual(inc.Diagnostics, full.Diagnostics)) {
				var files strings.Builder
				for _, f := range c.paths() {
					fmt.Fprintf(&files, "--- %s\n%s", f, after[f].Data)
				}
				t.Fatalf("seed %d/%d, %s: touched %v: incremental (valid %v) differs from full (valid %v)\nincremental: %v\nfull:        %v\n%s",
					seed, iter, v.name, touched, inc.Valid(), full.Valid(), inc.Diagnostics, full.Diagnostics, files.String())
			}
		}
		if !full.Valid() {
			fails++
		}
	}
	t.Logf("%d changes, %d invalid after the change, %d validated in full", n, fails, fallbacks)
	if fails < n/10 || fallbacks > n/2 {
		t.Errorf("the random edits break too few catalogs (%d) or fall back too often (%d) to test anything", fails, fallbacks)
	}
}

// TestIncrementalByPackage holds the cases of issue 14: a package's blobs in another directory are found
// by the package's identity, whatever directory the change touched.
func TestIncrementalByPackage(t *testing.T) {
	foo := `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v1"}]}
{"schema":"olm.bundle","name":"foo.v1","package":"foo","image":"quay.io/x/foo@sha256:` + strings.Repeat("1", 64) + `","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}}]}
`
	bar := strings.ReplaceAll(foo, "foo", "bar")
	beta := `{"schema":"olm.channel","name":"beta","package":"foo","entries":[{"name":"foo.v1"}]}` + "\n"
	base := fstest.MapFS{"foo/catalog.json": {Data: []byte(foo)}, "bar/catalog.json": {Data: []byte(bar)}, "bar/foo-beta.json": {Data: []byte(beta)}}
	for _, tc := range []struct {
		name    string
		edit    map[string]string // path -> new content ("" deletes)
		touched []string
		rule    string
	}{
		{"package directory removed, its channel elsewhere stays", map[string]string{"foo/catalog.json": ""}, []string{"foo/catalog.json"}, "channel-unknown-package"},
		{"package declared again from another directory", map[string]string{"bar/dup.json": `{"schema":"olm.package","name":"foo"}` + "\n"}, []string{"bar/dup.json"}, "package-duplicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after := fstest.MapFS{}
			for p, f := range base {
				after[p] = f
			}
			for p, data := range tc.edit {
				if data == "" {
					delete(after, p)
				} else {
					after[p] = &fstest.MapFile{Data: []byte(data)}
				}
			}
			res, fellBack, err := changed(t.Context(), memSource{after}, Change{Files: tc.touched, Before: func(p string) ([]byte, bool, error) {
				if f, ok := base[p]; ok {
					return f.Data, true, nil
				}
				return nil, false, nil
			}})
			if err != nil || fellBack {
				t.Fatalf("err %v, fell back %v", err, fellBack)
			}
			var rules []string
			for _, d := range res.Diagnostics {
				rules = append(rules, d.Rule)
			}
			if !slices.Contains(rules, tc.rule) {
				t.Errorf("incremental validation reports %v, want %s", rules, tc.rule)
			}
		})
	}
}

// A change to a file that holds a large share of a large catalog validates the whole catalog (cheaper
// than loading that file three times); a small share of it does not.
func TestIncrementalLargeShareValidatesWhole(t *testing.T) {
	pkg := func(name string, bundles int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `{"schema":"olm.package","name":%q,"defaultChannel":"stable"}`+"\n", name)
		var entries []string
		for i := range bundles {
			if i == 0 {
				entries = append(entries, fmt.Sprintf(`{"name":"%s.v0"}`, name))
			} else {
				entries = append(entries, fmt.Sprintf(`{"name":"%s.v%d","replaces":"%s.v%d"}`, name, i, name, i-1))
			}
			fmt.Fprintf(&b, `{"schema":"olm.bundle","name":"%s.v%d","package":%q,"image":"quay.io/x/%s@sha256:%s","properties":[{"type":"olm.package","value":{"packageName":%q,"version":"1.0.%d"}}]}`+"\n",
				name, i, name, name, strings.Repeat("1", 64), name, i)
		}
		fmt.Fprintf(&b, `{"schema":"olm.channel","name":"stable","package":%q,"entries":[%s]}`+"\n", name, strings.Join(entries, ","))
		return b.String()
	}
	big, small := pkg("big", 16000), pkg("small", 10)
	if len(big) < minIncrementalBytes {
		t.Fatalf("the big package is %d bytes, want %d or more", len(big), minIncrementalBytes)
	}
	fsys := fstest.MapFS{"big/catalog.json": {Data: []byte(big)}, "small/catalog.json": {Data: []byte(small)}}
	before := func(p string) ([]byte, bool, error) { return fsys[p].Data, true, nil }
	for _, tc := range []struct {
		file     string
		fellBack bool
	}{{"big/catalog.json", true}, {"small/catalog.json", false}} {
		res, fellBack, err := changed(t.Context(), memSource{fsys}, Change{Files: []string{tc.file}, Before: before})
		if err != nil || fellBack != tc.fellBack || !res.Valid() {
			t.Errorf("%s changed: err %v, whole catalog validated %v (want %v), valid %v %v", tc.file, err, fellBack, tc.fellBack, res.Valid(), res.Diagnostics[:min(2, len(res.Diagnostics))])
		}
	}
}

// A catalog holding an entry the listing refuses (here a symbolic link the change did not touch) is
// validated whole, so the refusal is reported: the selection loads a list of files and would never see it.
func TestIncrementalReportsRefusedEntries(t *testing.T) {
	foo := `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}` + "\n"
	after := fstest.MapFS{"foo/catalog.json": {Data: []byte(foo)}, "bar/catalog.json": {Data: []byte(strings.ReplaceAll(foo, "foo", "bar"))},
		"bar/notes.json": {Data: []byte("../foo/catalog.json"), Mode: fs.ModeSymlink | 0o777}}
	res, fellBack, err := changed(t.Context(), memSource{after}, Change{Files: []string{"foo/catalog.json"}, Before: func(p string) ([]byte, bool, error) {
		return []byte(foo), true, nil
	}})
	if err != nil || !fellBack {
		t.Fatalf("err %v, fell back %v: want the whole catalog validated", err, fellBack)
	}
	for _, d := range res.Diagnostics {
		if d.Rule == catalog.RuleRefused && d.File == "bar/notes.json" {
			return
		}
	}
	t.Errorf("incremental validation reports %v, want bar/notes.json refused", res.Diagnostics)
}
