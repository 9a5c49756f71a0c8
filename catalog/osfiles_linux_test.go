package catalog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe in the catalog directory (anyone can make one in a work tree the pre-commit hook checks)
// is refused as not a regular file; opening it must not wait for a writer that never comes.
func TestLoadRefusesNamedPipeWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "foo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "foo", "catalog.json"), 0o644); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan *Result, 1)
	go func() {
		res, err := LoadDir(ctx, dir, LoadOptions{})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	select {
	case res := <-done:
		if res == nil {
			return
		}
		for _, d := range res.Diagnostics {
			if d.File == "foo/catalog.json" && strings.Contains(d.Message, "not a regular file") {
				return
			}
		}
		t.Fatalf("want foo/catalog.json refused as not a regular file, got %v", res.Diagnostics)
	case <-ctx.Done():
		t.Fatal("the load waited on a named pipe for a minute")
	}
}

// Mapped files keep the per-file limit: a file over it is refused by its size before it is mapped, with
// the file and the limit named, as a read one is.
func TestMappedFileOverLimitIsRefused(t *testing.T) {
	mapEverything(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "foo"), 0o755); err != nil {
		t.Fatal(err)
	}
	blob := `{"schema":"olm.package","name":"foo"}` + strings.Repeat(" ", 2000)
	if err := os.WriteFile(filepath.Join(dir, "foo", "catalog.json"), []byte(blob), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := LoadDir(context.Background(), dir, LoadOptions{MaxFileSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		if d.Rule == RuleTooLarge && d.File == "foo/catalog.json" && strings.Contains(d.Message, "1000 bytes") {
			if len(res.Catalog.Packages) != 0 {
				t.Fatalf("the file over the limit was still loaded: %d packages", len(res.Catalog.Packages))
			}
			return
		}
	}
	t.Fatalf("want %s on foo/catalog.json naming the limit, got %v", RuleTooLarge, res.Diagnostics)
}
