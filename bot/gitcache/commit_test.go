package gitcache

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/internal/gittest"
)

// A directory committed over a subtree replaces exactly that subtree (git fsck agrees the objects are
// well formed), and the push is a fast-forward only: a branch that moved is reported, never overwritten.
func TestCommitDirAndPush(t *testing.T) {
	remote := gittest.New(t)
	remote.Git("config", "receive.denyCurrentBranch", "updateInstead")
	base := remote.Commit("main", "", "admin", "base", map[string]string{
		"README.md": "hi\n", "catalogs/x/old/catalog.json": "{}", "catalogs/x/stale.json": "{}", "catalogs/y.json": "{}"})
	c := &Cache{Dir: t.TempDir(), URL: func(owner, name string) string { return remote.Dir }}
	ctx := t.Context()
	dir, err := c.Fetch(ctx, "octo", "catalog", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	for path, body := range map[string]string{"a/catalog.json": `{"a":1}`, "b/catalog.json": `{"b":1}`, "b-c.json": "{}", "b/z/deep.json": "[]"} {
		p := filepath.Join(src, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	when := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	sha, err := CommitDir(dir, base, "catalogs/x", src, Signature{Name: "catalogbot", Email: "bot@example.invalid"}, "render\n", when)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Push(ctx, "octo", "catalog", "", sha, "main", base); err != nil {
		t.Fatal(err)
	}
	if got := remote.Git("rev-parse", "main"); got != sha {
		t.Fatalf("main is at %s, want the pushed %s", got, sha)
	}
	remote.Git("fsck", "--strict")
	want := "README.md\ncatalogs/x/a/catalog.json\ncatalogs/x/b-c.json\ncatalogs/x/b/catalog.json\ncatalogs/x/b/z/deep.json\ncatalogs/y.json"
	if got := remote.Git("ls-tree", "-r", "--name-only", sha); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if got := remote.Git("show", "-s", "--format=%P %an %ae %aI %s", sha); got != base+" catalogbot bot@example.invalid 2026-02-03T04:05:06+00:00 render" {
		t.Errorf("commit: %s", got)
	}
	if got := remote.Git("show", sha+":catalogs/x/b/catalog.json"); got != `{"b":1}` {
		t.Errorf("content: %q", got)
	}

	// The branch moved: the same kind of push is refused and says so.
	moved := remote.Commit("main", "", "admin", "other", map[string]string{"README.md": "moved\n"})
	again, err := CommitDir(dir, sha, "catalogs/x", src, Signature{Name: "catalogbot", Email: "bot@example.invalid"}, "render again\n", when)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Push(ctx, "octo", "catalog", "", again, "main", sha)
	if !errors.Is(err, ErrBranchMoved) || !strings.Contains(err.Error(), short(moved)) {
		t.Fatalf("push onto a moved branch: %v", err)
	}
	if got := remote.Git("rev-parse", "main"); got != moved {
		t.Fatalf("main is at %s, want %s (untouched)", got, moved)
	}

	// Not a directory in the way, no path escapes.
	if _, err := CommitDir(dir, base, "README.md/x", src, Signature{}, "m", when); err == nil || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("a file in the path: %v", err)
	}
	if _, err := CommitDir(dir, base, "a/../b", src, Signature{}, "m", when); err == nil {
		t.Error("a path with .. was accepted")
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(src, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := CommitDir(dir, base, "catalogs/x", src, Signature{}, "m", when); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("a symlink in the rendered tree: %v", err)
	}
}
