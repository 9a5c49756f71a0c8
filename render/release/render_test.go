package release

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render/template"
)

// releaseAndRender releases testdata/render/<id> (an upstream commit's parent: the package, the bundle
// directory and the committed catalogs the commit changed) offline: the bundle from its directory, the
// others from the committed catalogs. It returns the root and the catalogs as upstream's commit left them.
func releaseAndRender(t *testing.T, id string) (string, map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "render", id)
	root := copyDir(t, filepath.Join(dir, "before"))
	subject := strings.Fields(strings.Split(string(readTestFile(t, filepath.Join(dir, "commit.txt"))), "\n")[2])
	ctx := context.Background()
	r, err := Load(ctx, root, "operators/"+subject[1]+"/"+subject[2], upstreamPattern)
	if err != nil {
		t.Fatal(err)
	}
	if ds := r.Validate(); len(ds) > 0 {
		t.Fatalf("refused: %v", ds)
	}
	changes, err := r.Apply()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		if err := os.WriteFile(filepath.Join(root, c.File), c.After, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names, err := template.CommittedCatalogs(root, "catalogs")
	if err != nil {
		t.Fatal(err)
	}
	var cats []template.Catalog
	for _, n := range names {
		c := template.Catalog{Name: n, Dir: "catalogs/" + n}
		if n >= "v4.17" { // upstream's Makefile: from v4.17 on, bundle-object-to-csv-metadata
			c.MigrateLevel = template.MigrateCSVMetadata
		}
		cats = append(cats, c)
	}
	jobs, _, err := r.Jobs(cats)
	if err != nil {
		t.Fatal(err)
	}
	store := template.NewStore("")
	if err := template.SeedFromCommitted(ctx, store, root, cats, jobs); err != nil {
		t.Fatal(err)
	}
	results := r.Render(ctx, jobs, &template.Images{Store: store, Offline: true}, 2, io.Discard)
	if ds := template.Diagnostics(root, results, false); len(ds) > 0 {
		t.Fatalf("render: %v", ds)
	}
	if err := template.WriteResults(root, results); err != nil {
		t.Fatal(err)
	}
	want, err := filetree.Read(filepath.Join(dir, "after"))
	if err != nil {
		t.Fatal(err)
	}
	return root, want
}

// The catalogs come out as upstream's commit has them, byte for byte: a semver template into v4.18 and
// v4.22 (a8565d621, development) and a basic template into v4.16 (olm.bundle.object) and v4.18
// (olm.csv.metadata) (b212bb168, held out).
func TestReleaseRendersUpstreamCatalogs(t *testing.T) {
	for _, id := range []string{"a8565d621", "b212bb168"} {
		t.Run(id, func(t *testing.T) {
			root, want := releaseAndRender(t, id)
			for file, w := range want {
				got := readTestFile(t, filepath.Join(root, file))
				if !bytes.Equal(got, w) {
					t.Errorf("%s differs from upstream's commit (%d bytes, upstream %d)", file, len(got), len(w))
				}
			}
		})
	}
}
