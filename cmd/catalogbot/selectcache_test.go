package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestValidateStagedSelectCache is the pre-commit hook with its select cache (.git/catalogbot): a
// first run remembers which packages each file holds; then bar's file, untouched by the staged change,
// is edited in the work tree to declare foo again, keeping its size and modification time. The staged
// validation of a change to foo fails as the full one does: the cache's entry for bar's file is not
// trusted, the file's change time having moved.
func TestValidateStagedSelectCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // the cache's key
	dup := `{"schema":"olm.package","name":"foo"}` + "\n"
	bar := strings.ReplaceAll(catalogFile("quay.io/example/bar-bundle@"+digest), "foo", "bar")
	repo := writeCatalog(t, map[string]string{
		"catalog/foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest),
		"catalog/bar/catalog.json": bar + strings.Repeat(" ", len(dup)-1) + "\n",
	})
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	dir := filepath.Join(repo, "catalog")
	select { // files written in the last 2 s are not remembered (git's racy-clean rule)
	case <-t.Context().Done():
		t.Fatal(t.Context().Err())
	case <-time.After(2200 * time.Millisecond):
	}
	foo := filepath.Join(dir, "foo", "catalog.json")
	data, err := os.ReadFile(foo)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(foo, append(data, ' ', '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "add", "-A")
	var out bytes.Buffer
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("foo edited: exit %d\n%s", code, out.String())
	}
	caches, _ := filepath.Glob(filepath.Join(repo, ".git", "catalogbot", "select-*"))
	if len(caches) != 1 {
		t.Fatalf("select cache files: %v, want one", caches)
	}
	if cache, err := os.ReadFile(caches[0]); err != nil || !bytes.Contains(cache, []byte(`"bar/catalog.json"`)) {
		t.Fatalf("the cache does not remember bar's file (%v):\n%s", err, cache)
	}
	p := filepath.Join(dir, "bar", "catalog.json")
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(bar+dup), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", "--staged", dir}, {"validate", "--changed-since", "HEAD", dir}, {"validate", dir}} {
		out.Reset()
		if code := run(t.Context(), args, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "package-duplicate") {
			t.Errorf("catalogbot %v with foo declared again in bar's file: exit %d, want 1 with package-duplicate\n%s", args, code, out.String())
		}
	}
}
