package filetree

import (
	"os"
	"path/filepath"
	"testing"
)

// A cache file is replaced whole, its directories created, and no temporary file stays behind.
func TestWriteCacheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "entry.json")
	for _, data := range []string{"first", "second, longer"} {
		if err := WriteCacheFile(path, 0o700, []byte(data)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != data {
			t.Fatalf("read back %q, %v; want %q", got, err, data)
		}
	}
	names, err := os.ReadDir(filepath.Dir(path))
	if err != nil || len(names) != 1 {
		t.Fatalf("directory holds %v (%v), want the entry alone", names, err)
	}
	if err := WriteCacheFile(filepath.Join(path, "under-a-file"), 0o700, []byte("x")); err == nil {
		t.Fatal("a cache file under a file was written")
	}
}
