package catalog

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// fuzzSeeds returns every file of the opm cases (none when the shared data is absent).
func fuzzSeeds(t testing.TB) [][]byte {
	root := filepath.Join("..", "..", "shared", "data", "opm-cases")
	if v := os.Getenv("CATALOGBOT_SHARED_DATA"); v != "" {
		root = filepath.Join(v, "opm-cases")
	}
	var seeds [][]byte
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(filepath.ToSlash(p), "/catalog/") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, data)
		return nil
	})
	return seeds
}

// wholeFile reports whether a rule is about a file as a whole, which has no line to point at.
func wholeFile(rule string) bool { return rule == RuleFile || rule == RuleTooLarge }

// loadOne loads data as the only file of a catalog, named name.
func loadOne(t *testing.T, name string, data []byte, lean bool) *Result {
	t.Helper()
	res, err := LoadFS(context.Background(), fstest.MapFS{name: {Data: data}},
		LoadOptions{Lean: lean, Concurrency: 1, MaxFileSize: 1 << 20})
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return res
}

// diagKeys renders diagnostics with the file name replaced, to compare loads of one text under two names.
func diagKeys(ds []diag.Diagnostic, name string) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		d.File = "FILE"
		d.Message = strings.ReplaceAll(d.Message, name, "FILE")
		out[i] = d.String()
	}
	return out
}

func FuzzLoad(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	for _, s := range []string{"", "---\n", "{\"schema\":\"x\"}\nschema: y\n", "\f{\"schema\":\"x\"}", "a: &a [*a]\n", "{\"schema\":\"\n\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var keys [2][]string
		for i, name := range []string{"catalog.json", "catalog.yaml"} {
			res := loadOne(t, name, data, false)
			for _, d := range res.Diagnostics {
				if d.File != name {
					t.Errorf("%s: diagnostic names file %q: %s", name, d.File, d)
				}
				if d.Line <= 0 && !wholeFile(d.Rule) {
					t.Errorf("%s: diagnostic without a line: %s", name, d)
				}
				if d.Rule == "" || strings.TrimSpace(d.Message) == "" {
					t.Errorf("%s: diagnostic without rule or message: %+v", name, d)
				}
			}
			keys[i] = diagKeys(res.Diagnostics, name)
			// a lean load drops values after checking them: it must find exactly the same problems
			if lean := diagKeys(loadOne(t, name, data, true).Diagnostics, name); strings.Join(lean, "\n") != strings.Join(keys[i], "\n") {
				t.Errorf("%s: lean load reports\n%s\nfull load reports\n%s", name, strings.Join(lean, "\n"), strings.Join(keys[i], "\n"))
			}
		}
		// the format is guessed from the content, as opm does, never from the file name
		if strings.Join(keys[0], "\n") != strings.Join(keys[1], "\n") {
			t.Errorf("same text, different diagnostics by name:\n.json: %s\n.yaml: %s", strings.Join(keys[0], "\n"), strings.Join(keys[1], "\n"))
		}
	})
}

// billionLaughs is the classic alias bomb: levels of nine references to the level below.
func billionLaughs(levels int) string {
	var b strings.Builder
	b.WriteString("schema: x\nl0: &l0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i <= levels; i++ {
		ref := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "l%d: &l%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(ref+",", 9), ","))
	}
	return b.String()
}

// nestedAliases nests each anchored mapping inside the next, every level using the previous one twice.
func nestedAliases(levels int) string {
	var b strings.Builder
	b.WriteString("schema: x\nn0: &n0 {k: v}\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "n%d: &n%d {a: *n%d, b: *n%d, c: {d: *n%d}}\n", i, i, i-1, i-1, i-1)
	}
	return b.String()
}

func TestYAMLBomb(t *testing.T) {
	cases := map[string]string{
		"billion-laughs":         billionLaughs(9),
		"nested-aliases":         nestedAliases(40),
		"bomb-after-json-blob":   "{\"schema\":\"x\"}\n" + billionLaughs(9),
		"bomb-in-second-doc":     "schema: x\n---\n" + billionLaughs(9),
		"deep-flow-nesting":      "schema: x\nd: " + strings.Repeat("[", 200000) + strings.Repeat("]", 200000) + "\n",
		"deep-block-nesting":     "schema: x\nd:\n" + strings.Repeat("- ", 20000) + "x\n",
		"recursive-alias":        "schema: x\na: &a [*a]\n",
		"bomb-in-bundle-package": "schema: olm.bundle\nname: b\npackage: p\nproperties: &p [" + strings.Repeat("{type: olm.gvk, value: {group: g, kind: k, version: v}},", 50) + "]\nx: " + strings.Repeat("[*p, ", 1) + billionLaughsInline(9) + "]\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			res, err := LoadFS(context.Background(), fstest.MapFS{"bomb.yaml": {Data: []byte(text)}}, LoadOptions{Lean: true})
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			grown := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes in, %v, %d MB allocated, %d diagnostics", len(text), elapsed, grown>>20, len(res.Diagnostics))
			if elapsed > 2*time.Second {
				t.Errorf("took %v, want < 2s", elapsed)
			}
			if grown > 200<<20 {
				t.Errorf("allocated %d MB, want < 200 MB", grown>>20)
			}
			if len(res.Diagnostics) == 0 {
				t.Fatalf("no diagnostic for %s", name)
			}
			for _, d := range res.Diagnostics {
				t.Log(d.String())
				if d.File != "bomb.yaml" || d.Line == 0 {
					t.Errorf("diagnostic without file:line: %s", d)
				}
			}
		})
	}
}

// billionLaughsInline is an alias bomb inside one flow sequence (anchors defined on the way).
func billionLaughsInline(levels int) string {
	var b strings.Builder
	b.WriteString("&i0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]")
	for i := 1; i <= levels; i++ {
		ref := fmt.Sprintf("*i%d", i-1)
		fmt.Fprintf(&b, ", &i%d [%s]", i, strings.TrimSuffix(strings.Repeat(ref+",", 9), ","))
	}
	return b.String()
}

// endlessFile is a file of endless spaces that counts what is read from it and claims whatever size it is
// told to (a file can grow between stat and read).
type endlessFile struct {
	name string
	size int64
	read *atomic.Int64
}

func (f *endlessFile) Stat() (fs.FileInfo, error) { return endlessInfo{f}, nil }
func (f *endlessFile) Close() error               { return nil }
func (f *endlessFile) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	f.read.Add(int64(len(p)))
	return len(p), nil
}

type endlessInfo struct{ f *endlessFile }

func (i endlessInfo) Name() string       { return i.f.name }
func (i endlessInfo) Size() int64        { return i.f.size }
func (i endlessInfo) Mode() fs.FileMode  { return 0o444 }
func (i endlessInfo) ModTime() time.Time { return time.Time{} }
func (i endlessInfo) IsDir() bool        { return false }
func (i endlessInfo) Sys() any           { return nil }

// bigFS lists huge.json (and a small valid file) and serves huge.json from an endlessFile.
type bigFS struct {
	fstest.MapFS
	size int64
	read *atomic.Int64
}

func (b bigFS) Open(name string) (fs.File, error) {
	if name == "huge.json" {
		return &endlessFile{name: name, size: b.size, read: b.read}, nil
	}
	return b.MapFS.Open(name)
}

var _ io.Reader = (*endlessFile)(nil)

func TestHugeFile(t *testing.T) {
	const limit = 1 << 20
	for _, tc := range []struct {
		name     string
		statSize int64 // what Stat claims
		maxRead  int64 // the most the loader may read
	}{
		{"stat-says-too-large", 2 * limit, 0},
		{"grows-after-stat", 100, limit + 64<<10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			read := &atomic.Int64{}
			fsys := bigFS{MapFS: fstest.MapFS{
				"huge.json":  {Data: nil},
				"small.yaml": {Data: []byte("schema: x\n")},
			}, size: tc.statSize, read: read}
			res, err := LoadFS(context.Background(), fsys, LoadOptions{MaxFileSize: limit})
			if err != nil {
				t.Fatal(err)
			}
			if got := read.Load(); got > tc.maxRead {
				t.Errorf("read %d bytes of the huge file, want at most %d", got, tc.maxRead)
			}
			if len(res.Diagnostics) != 1 {
				t.Fatalf("want one diagnostic, got %v", res.Diagnostics)
			}
			d := res.Diagnostics[0]
			if d.Rule != RuleTooLarge || d.File != "huge.json" || !strings.Contains(d.Message, fmt.Sprint(limit)) {
				t.Errorf("want a %s diagnostic for huge.json naming the limit, got %s", RuleTooLarge, d)
			}
			if len(res.Catalog.Others) != 1 {
				t.Errorf("the small file beside the huge one was not loaded: %+v", res.Catalog.Others)
			}
		})
	}
	t.Run("sparse-file-on-disk", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.Truncate(createFile(t, filepath.Join(dir, "huge.json")), 1<<30); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := LoadDir(context.Background(), dir, LoadOptions{MaxFileSize: limit})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Diagnostics) != 1 || res.Diagnostics[0].Rule != RuleTooLarge || res.Diagnostics[0].File != "huge.json" {
			t.Fatalf("want one %s diagnostic for huge.json, got %v", RuleTooLarge, res.Diagnostics)
		}
		if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
			t.Errorf("allocated %d MB for a 1 GiB file over a 1 MiB limit", grown>>20)
		}
	})
}

func createFile(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSymlinksAreRefused: opm follows a symbolic link (inside the catalog or not); catalogbot refuses every
// one with the reason, as the image build does, and reads nothing through it, inside or outside.
func TestSymlinksAreRefused(t *testing.T) {
	outside := t.TempDir()
	blob := []byte(`{"schema":"x.example.com/note"}`)
	if err := os.WriteFile(filepath.Join(outside, "secret.json"), blob, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"pkg/.indexignore": "real.data\n", "pkg/real.data": string(blob)}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"pkg/absolute.json":    filepath.Join(dir, "pkg", "real.data"),
		"pkg/chain.json":       "absolute.json",
		"pkg/dotdot.json":      filepath.Join(dir, "pkg", "..", "pkg", "real.data"),
		"pkg/relative.json":    "real.data",
		"pkg/dir":              ".",
		"outside-abs.json":     filepath.Join(outside, "secret.json"),
		"outside-rel.json":     filepath.Join("..", filepath.Base(outside), "secret.json"),
		"escape-via-dots.json": filepath.Join(dir, "..", filepath.Base(outside), "secret.json"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	res, err := LoadDir(context.Background(), dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(res.Catalog.Others); got != 0 || len(res.Files) != 0 {
		t.Errorf("read %d blobs of files %q through symbolic links, want none", got, res.Files)
	}
	refused := map[string]bool{}
	for _, d := range res.Diagnostics {
		if d.Rule != RuleRefused || !strings.Contains(d.Message, "is a symbolic link (to ") || d.Hint == "" {
			t.Errorf("unexpected diagnostic: %s", d)
		}
		refused[d.File] = true
	}
	for name := range links {
		if !refused[name] {
			t.Errorf("symbolic link %s was not refused", name)
		}
	}
}
