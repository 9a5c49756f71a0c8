package filetree

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "catalog.yaml")
	if err := WriteFileBytes(p, 0o640, []byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileBytes(p, 0o600, []byte("two\n")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(data) != "two\n" || st.Mode().Perm() != 0o600 {
		t.Fatalf("got %q %v", data, st.Mode())
	}
	// A writer failing half-way leaves the old content and no temporary file.
	boom := errors.New("boom")
	err := WriteFile(p, 0o644, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), p) {
		t.Fatalf("want boom naming %s, got %v", p, err)
	}
	if data, _ := os.ReadFile(p); string(data) != "two\n" {
		t.Fatalf("the old content was lost: %q", data)
	}
	if got := entries(t, filepath.Join(dir, "sub")); !reflect.DeepEqual(got, []string{"catalog.yaml"}) {
		t.Fatalf("left behind: %v", got)
	}
}

func TestReplaceDir(t *testing.T) {
	parent := t.TempDir()
	dst := filepath.Join(parent, "catalog")
	fill := func(content string) func(string) error {
		return func(dir string) error {
			return WriteFileBytes(filepath.Join(dir, "foo", "catalog.json"), 0o644, []byte(content))
		}
	}
	if err := ReplaceDir(dst, fill("v1")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "stale.json"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceDir(dst, fill("v2")); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dst)
	if err != nil || !reflect.DeepEqual(got, map[string][]byte{"foo/catalog.json": []byte("v2")}) {
		t.Fatalf("got %q %v", got, err)
	}
	// A failing fill leaves the old tree as it was and no temporary directory.
	boom := errors.New("boom")
	err = ReplaceDir(dst, func(dir string) error {
		fill("half")(dir)
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("want boom, got %v", err)
	}
	if got, _ := Read(dst); string(got["foo/catalog.json"]) != "v2" {
		t.Fatalf("the old tree changed: %q", got)
	}
	if got := entries(t, parent); !reflect.DeepEqual(got, []string{"catalog"}) {
		t.Fatalf("left behind: %v", got)
	}
	// A file where the directory should be is refused, not replaced.
	file := filepath.Join(parent, "file")
	os.WriteFile(file, []byte("keep"), 0o644)
	if err := ReplaceDir(file, fill("v1")); diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("want a usage error, got %v", err)
	}
	if data, _ := os.ReadFile(file); string(data) != "keep" {
		t.Fatalf("the file was replaced")
	}
}

func TestReadAndDiff(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "x"), []byte("1"), 0o644)
	os.WriteFile(filepath.Join(dir, "y"), []byte("2"), 0o644)
	old, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Read(filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Fatalf("a missing tree: %v %v", got, err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "link is a symbolic link") {
		t.Fatalf("want the symlink refused by name, got %v", err)
	}
	cur := map[string][]byte{"a/x": []byte("changed"), "z": []byte("new")}
	got := Diff(old, cur)
	want := []Change{
		{Path: "a/x", Kind: Modified, Old: []byte("1"), New: []byte("changed")},
		{Path: "y", Kind: Removed, Old: []byte("2")},
		{Path: "z", Kind: Added, New: []byte("new")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Diff = %+v, want %+v", got, want)
	}
	if d := Diff(old, old); len(d) != 0 {
		t.Fatalf("equal trees differ: %+v", d)
	}
}

// WriteNew never overwrites: a file already there (another writer's, or a planted one) is an error and
// stays as it was.
func TestWriteNewRefusesAnExistingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "catalog.json")
	if err := WriteNew(p, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "one"); return err }); err != nil {
		t.Fatal(err)
	}
	if err := WriteNew(p, 0o644, func(w io.Writer) error { _, err := io.WriteString(w, "two"); return err }); err == nil {
		t.Fatal("WriteNew overwrote an existing file")
	}
	if data, _ := os.ReadFile(p); string(data) != "one" {
		t.Fatalf("content %q, want one", data)
	}
}
