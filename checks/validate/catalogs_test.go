package validate

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestCatalogs(t *testing.T) {
	root := t.TempDir()
	write := func(rel, data string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("catalogs/v4.16/foo/catalog.json", `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}`+"\n")
	write("catalogs/v4.17/foo/catalog.json", `{"schema":"olm.package","name":"foo"}`+"\n"+`{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v1"}]}`+"\n")
	dirs := []CatalogDir{{"v4.16", "catalogs/v4.16"}, {"v4.17", "catalogs/v4.17"}, {"v4.18", "catalogs/v4.18"}}
	var mu sync.Mutex
	seen := map[string]bool{}
	got := Catalogs(context.Background(), root, dirs, 2, Options{}, func(r CatalogResult) {
		mu.Lock()
		seen[r.Name] = true
		mu.Unlock()
	})
	if len(got) != 3 || len(seen) != 3 {
		t.Fatalf("want 3 results and 3 callbacks, got %d and %v", len(got), seen)
	}
	for i, r := range got {
		if r.Name != dirs[i].Name {
			t.Fatalf("result %d is %s, want %s (order kept)", i, r.Name, dirs[i].Name)
		}
	}
	if got[2].Err == nil {
		t.Errorf("a missing catalog directory is an error, got %+v", got[2].Result)
	}
	for _, r := range got[:2] {
		if r.Err != nil || len(r.Diagnostics) == 0 {
			t.Fatalf("%s: want errors found, got %v %v", r.Name, r.Err, r.Result)
		}
		for _, d := range r.Diagnostics {
			if d.File != r.Dir+"/foo/catalog.json" {
				t.Errorf("%s: diagnostic file %q is not relative to the repository root", r.Name, d.File)
			}
		}
	}
}
