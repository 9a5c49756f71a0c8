package render

import (
	"archive/tar"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

const pkgBlob = "---\nschema: olm.package\nname: demo\ndefaultChannel: stable\n"

func TestMaliciousLayers(t *testing.T) {
	reg := newTestRegistry(t)
	good := tarEntry{name: "configs/demo/index.yaml", body: pkgBlob}
	cases := []struct {
		name    string
		entries []tarEntry
		want    []string // in the error, besides the image
	}{
		{"dot-dot escape", []tarEntry{good, {name: "configs/../../escape-catalogbot-test", body: "x"}},
			[]string{`"configs/../../escape-catalogbot-test"`, `".." component`}},
		{"dot-dot outside configs", []tarEntry{good, {name: "../escape-catalogbot-test", body: "x"}},
			[]string{`"../escape-catalogbot-test"`, `".." component`}},
		{"absolute path", []tarEntry{good, {name: "/configs/demo/abs.yaml", body: pkgBlob}},
			[]string{`"/configs/demo/abs.yaml"`, "absolute path"}},
		{"symlink to /etc/passwd", []tarEntry{good, {name: "configs/demo/passwd.yaml", typ: tar.TypeSymlink, linkname: "/etc/passwd"}},
			[]string{`"configs/demo/passwd.yaml"`, `"/etc/passwd" points outside /configs`}},
		{"relative symlink escaping", []tarEntry{good, {name: "configs/demo/up.yaml", typ: tar.TypeSymlink, linkname: "../../../../etc/passwd"}},
			[]string{`"configs/demo/up.yaml"`, "escapes the image"}},
		{"hardlink outside", []tarEntry{good, {name: "configs/demo/hard.yaml", typ: tar.TypeLink, linkname: "etc/passwd"}},
			[]string{`"configs/demo/hard.yaml"`, "hard link to /etc/passwd, outside /configs"}},
		{"symlink to a directory", []tarEntry{good, {name: "configs/loop", typ: tar.TypeSymlink, linkname: "demo"}},
			[]string{`"configs/loop"`, "links to directories are not supported"}},
		{"device file", []tarEntry{good, {name: "configs/demo/null", typ: tar.TypeChar}},
			[]string{`"configs/demo/null"`, "device or FIFO"}},
		{"huge file", []tarEntry{good, {name: "configs/demo/huge.json", size: 2 << 20}},
			[]string{`"configs/demo/huge.json"`, "larger than the 1048576-byte limit"}},
		{"too much in total", []tarEntry{good, {name: "configs/a.json", size: 700 << 10}, {name: "configs/b.json", size: 700 << 10}, {name: "configs/c.json", size: 700 << 10}},
			[]string{`"configs/c.json"`, "exceed the 2097152-byte limit"}},
		{"configs is a symlink", []tarEntry{{name: "configs", typ: tar.TypeSymlink, linkname: "/etc"}},
			[]string{`"configs"`, "is not a directory"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := image(t, indexLabels, layer(t, tarEntry{name: "etc/passwd", body: "root:x:0:0\n"}), layer(t, c.entries...))
			tag, _ := reg.push(t, "bad/catalog"+string(rune('a'+i))+":v1", img)
			opts := testOptions(t)
			opts.MaxFileBytes, opts.MaxTotalBytes = 1<<20, 2<<20
			cfg := config(t, "catalog", Reference{Name: "demo", Image: tag})
			out, ds, err := Render(context.Background(), cfg, opts)
			if err == nil || out != nil {
				t.Fatal("want a refusal")
			}
			if diag.CategoryOf(err) != diag.Invalid || len(ds) != 1 {
				t.Fatalf("want one invalid-image diagnostic, got %v (%s) %v", err, diag.CategoryOf(err), ds)
			}
			for _, s := range append(c.want, tag) {
				if !strings.Contains(ds[0].Message, s) {
					t.Errorf("message %q does not mention %s", ds[0].Message, s)
				}
			}
			// Extraction is in memory: nothing was written, not even into the cache.
			if entries, _ := os.ReadDir(opts.CacheDir); len(entries) != 0 {
				t.Errorf("the cache has %d entries after a refused image", len(entries))
			}
			for _, p := range []string{filepath.Join(os.TempDir(), "escape-catalogbot-test"), "/escape-catalogbot-test"} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists", p)
				}
			}
		})
	}
}

func TestTooManyEntries(t *testing.T) {
	reg := newTestRegistry(t)
	var entries []tarEntry
	for i := range 20 {
		entries = append(entries, tarEntry{name: "configs/demo/f" + string(rune('a'+i)) + ".yaml", body: pkgBlob})
	}
	tag, _ := reg.push(t, "many/catalog:v1", image(t, indexLabels, layer(t, entries...)))
	opts := testOptions(t)
	opts.MaxEntries = 10
	_, ds, err := Render(context.Background(), config(t, "catalog", Reference{Name: "demo", Image: tag}), opts)
	if err == nil || len(ds) != 1 || !strings.Contains(ds[0].Message, "more than 10 entries under /configs") {
		t.Fatalf("got %v %v", err, ds)
	}
}

// TestFlattenLayers checks the union-filesystem semantics: upper layers win, whiteouts delete, opaque
// directories hide lower contents, and links inside /configs resolve.
func TestFlattenLayers(t *testing.T) {
	l1 := layer(t,
		tarEntry{name: "configs/", typ: tar.TypeDir},
		tarEntry{name: "configs/a/index.yaml", body: "a1"},
		tarEntry{name: "configs/b/index.yaml", body: "b1"},
		tarEntry{name: "configs/c/old.yaml", body: "c1"},
		tarEntry{name: "configs/c/keep.yaml", body: "c-keep"},
		tarEntry{name: "configs/d/index.yaml", body: "d1"},
		tarEntry{name: "other/x", body: "not read"},
	)
	l2 := layer(t,
		tarEntry{name: "./configs/a/index.yaml", body: "a2"},
		tarEntry{name: "configs/b/.wh.index.yaml"},
		tarEntry{name: "configs/c/.wh..wh..opq"},
		tarEntry{name: "configs/c/new.yaml", body: "c2"},
		tarEntry{name: "configs/.wh.d"},
		tarEntry{name: "configs/e/link.yaml", typ: tar.TypeSymlink, linkname: "../a/index.yaml"},
		tarEntry{name: "configs/e/abs.yaml", typ: tar.TypeSymlink, linkname: "/configs/c/new.yaml"},
		tarEntry{name: "configs/e/hard.yaml", typ: tar.TypeLink, linkname: "configs/c/new.yaml"},
	)
	l3 := layer(t,
		tarEntry{name: "configs/a/index.yaml", body: "a3-first"},
		tarEntry{name: "configs/a/index.yaml", body: "a3"},
		tarEntry{name: "configs/c/keep.yaml", body: "c3"},
	)
	img := image(t, indexLabels, l1, l2, l3)
	m, err := extractFS(context.Background(), img, []string{"configs"}, limits{maxTotal: 1 << 20, maxFile: 1 << 20, maxEntries: 100})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = fs.WalkDir(m, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(m, p)
		got[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"configs/a/index.yaml": "a3",
		"configs/c/new.yaml":   "c2",
		"configs/c/keep.yaml":  "c3",
		"configs/e/link.yaml":  "a3",
		"configs/e/abs.yaml":   "c2",
		"configs/e/hard.yaml":  "c2",
	}
	if !equalMaps(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}
