package release

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/filetree"
)

// upstreamPattern is community-operators-prod's bundle image pattern.
const upstreamPattern = "quay.io/community-operator-pipeline-prod/{package}:{version}"

// fixture is one upstream "Add <package> <version> to FBC" commit of testdata/upstream (see its README).
type fixture struct {
	dir, subject, pkg, version, csvName string
}

func loadFixture(t *testing.T, id string) fixture {
	t.Helper()
	dir := filepath.Join("testdata", "upstream", id)
	data, err := os.ReadFile(filepath.Join(dir, "commit.txt"))
	if err != nil {
		t.Fatal(err)
	}
	l := strings.Split(strings.TrimSpace(string(data)), "\n")
	f := strings.Fields(l[2])
	return fixture{dir: dir, subject: l[2], pkg: f[1], version: f[2], csvName: l[3]}
}

// releaseOf is fixture f's release in a copy of its parent commit's files (the bundle named, not rendered).
func releaseOf(t *testing.T, f fixture) *Release {
	t.Helper()
	return releaseIn(t, f, copyDir(t, filepath.Join(f.dir, "before")))
}

// releaseIn is fixture f's release in root.
func releaseIn(t *testing.T, f fixture, root string) *Release {
	t.Helper()
	r, err := read(root, "operators/"+f.pkg+"/"+f.version, upstreamPattern)
	if err != nil {
		t.Fatal(err)
	}
	r.Bundle.Name = f.csvName
	return r
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

// checkUpstream applies the fixture's release and compares every template with upstream's commit.
func checkUpstream(t *testing.T, id string) {
	f := loadFixture(t, id)
	r := releaseOf(t, f)
	if ds := r.Validate(); len(ds) > 0 {
		t.Fatalf("%s: refused: %v", f.subject, ds)
	}
	changes, err := r.Apply()
	if err != nil {
		t.Fatalf("%s: %v", f.subject, err)
	}
	want, err := filetree.Read(filepath.Join(f.dir, "after"))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != len(want) {
		t.Errorf("%s: %d templates changed, upstream changed %d", f.subject, len(changes), len(want))
	}
	for _, c := range changes {
		if w, ok := want[c.File]; !ok {
			t.Errorf("%s: %s changed, upstream left it", f.subject, c.File)
		} else if !bytes.Equal(c.After, w) {
			t.Errorf("%s: %s differs from upstream's commit:\n--- ours\n%s\n--- upstream\n%s", f.subject, c.File, c.After, w)
		}
	}
}

func readTestFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
