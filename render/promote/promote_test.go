package promote

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

// upstreamCats are community-operators-prod's v4.21 and v4.22 catalogs (olm.csv.metadata, opm v1.73.0).
var upstreamCats = []template.Catalog{
	{Name: "v4.21", Dir: "catalogs/v4.21", MigrateLevel: template.MigrateCSVMetadata},
	{Name: "v4.22", Dir: "catalogs/v4.22", MigrateLevel: template.MigrateCSVMetadata},
}

// copyDir is a temporary copy of dir.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return root
}

// The promotion of testdata/upstream/<id> (its parent's files) comes out as upstream's commit: the
// ci.yaml byte for byte (a block list after its comment, a flow list) and the new catalog rendered
// offline from the committed v4.21 catalog, byte for byte.
func TestPromoteReproducesUpstreamCommits(t *testing.T) {
	for _, tc := range []struct{ id, pkg string }{{"9a66986dc", "kepler-operator"}, {"640f90528", "rsct-operator"}} {
		t.Run(tc.id, func(t *testing.T) {
			dir := filepath.Join("testdata", "upstream", tc.id)
			root := copyDir(t, filepath.Join(dir, "before"))
			p, err := Plan(root, upstreamCats, "4.22", tc.pkg, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Diagnostics) > 0 || len(p.Packages) != 1 {
				t.Fatalf("refused: %v, %d packages", p.Diagnostics, len(p.Packages))
			}
			pk := p.Packages[0]
			subject := strings.Split(string(readFile(t, filepath.Join(dir, "commit.txt"))), "\n")[2]
			if !strings.HasPrefix(subject, pk.Title) || !pk.ReviewNeeded || pk.Strategy != ReviewNeeded {
				t.Errorf("title %q (upstream's %q), strategy %s, review needed %v", pk.Title, subject, pk.Strategy, pk.ReviewNeeded)
			}
			ctx := context.Background()
			store := template.NewStore("")
			if err := template.SeedFromCommitted(ctx, store, root, upstreamCats, p.Jobs()); err != nil {
				t.Fatal(err)
			}
			results := p.Render(ctx, &template.Images{Store: store, Offline: true}, 1, io.Discard)
			if ds := template.Diagnostics(root, results, false); len(ds) > 0 {
				t.Fatalf("render: %v", ds)
			}
			want, err := filetree.Read(filepath.Join(dir, "after"))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{pk.CI.File: pk.CI.After, results[0].Job.Output(): results[0].Data}
			if files := pk.Files(); len(files) != 2 || got[files[0]] == nil || got[files[1]] == nil {
				t.Errorf("files %v", files)
			}
			for file, w := range want {
				if !bytes.Equal(got[file], w) {
					t.Errorf("%s differs from upstream's commit:\n--- ours\n%s\n--- upstream\n%s", file, head(got[file]), head(w))
				}
			}
		})
	}
}

// head is the start of a file, for a failure message.
func head(data []byte) []byte { return data[:min(len(data), 800)] }

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
