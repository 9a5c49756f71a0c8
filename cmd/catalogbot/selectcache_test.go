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
	for _, args := range [][]string{{"validate", "--changed-since", "HEAD", dir}, {"validate", dir}} {
		out.Reset()
		if code := run(t.Context(), args, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "package-duplicate") {
			t.Errorf("catalogbot %v with foo declared again in bar's file: exit %d, want 1 with package-duplicate\n%s", args, code, out.String())
		}
	}
	// --staged validates the work tree, which now differs from what the commit holds: refused, naming
	// the file; once it is staged, the staged validation fails as the full one does.
	var stderr bytes.Buffer
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &stderr); code != 2 || !strings.Contains(stderr.String(), "bar/catalog.json") {
		t.Errorf("--staged with bar's file changed but not staged: exit %d, want 2 naming it\n%s", code, stderr.String())
	}
	gitIn(t, repo, "add", "-A")
	out.Reset()
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &bytes.Buffer{}); code != 1 || !strings.Contains(out.String(), "package-duplicate") {
		t.Errorf("--staged with foo declared again in bar's staged file: exit %d, want 1 with package-duplicate\n%s", code, out.String())
	}
}

// A staged change whose missing bundle exists only in an untracked file, or is fixed only in the work
// tree, would commit a broken catalog that the work tree's validation passes: --staged refuses both.
func TestValidateStagedRefusesWhatTheCommitDoesNotHold(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	repo := writeCatalog(t, map[string]string{"catalog/foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest)})
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	dir := filepath.Join(repo, "catalog")
	write := func(rel, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// the channel's bundle moves to a new file that is never added
	good := catalogFile("quay.io/example/foo-bundle@" + digest)
	i := strings.Index(good, `{"schema":"olm.bundle"`)
	if i < 0 {
		t.Fatalf("test catalog has no bundle:\n%s", good)
	}
	write("foo/catalog.json", good[:i])
	write("foo/bundle.json", good[i:])
	gitIn(t, repo, "add", "catalog/foo/catalog.json")
	var out, stderr bytes.Buffer
	if code := run(t.Context(), []string{"validate", dir}, &out, &stderr); code != 0 {
		t.Fatalf("the work tree is valid: exit %d\n%s%s", code, out.String(), stderr.String())
	}
	stderr.Reset()
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &stderr); code != 2 || !strings.Contains(stderr.String(), "foo/bundle.json") {
		t.Fatalf("--staged with the bundle in an untracked file: exit %d, want 2 naming it\n%s", code, stderr.String())
	}
	// staged broken, fixed only in the work tree
	gitIn(t, repo, "add", "catalog/foo/bundle.json")
	write("foo/catalog.json", "{not json\n")
	gitIn(t, repo, "add", "catalog/foo/catalog.json")
	write("foo/catalog.json", good[:i])
	stderr.Reset()
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &stderr); code != 2 || !strings.Contains(stderr.String(), "foo/catalog.json") {
		t.Fatalf("--staged with the fix not staged: exit %d, want 2 naming it\n%s", code, stderr.String())
	}
	gitIn(t, repo, "add", "catalog/foo/catalog.json")
	out.Reset()
	if code := run(t.Context(), []string{"validate", "--staged", dir}, &out, &bytes.Buffer{}); code != 0 {
		t.Fatalf("--staged with everything staged: exit %d\n%s", code, out.String())
	}
}
