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

// CommitFiles sets exactly the files it is given (git fsck agrees), gives the same SHA for the same
// inputs (a release computed again after a restart is the commit pushed before), refuses paths that leave
// the tree or name .git, and Push creates a branch (old "") and leaves one already at the commit as it is.
func TestCommitFilesAndCreateBranch(t *testing.T) {
	remote := gittest.New(t)
	base := remote.Commit("main", "", "admin", "base", map[string]string{"README.md": "hi\n", "operators/p/ci.yaml": "a\n", "catalogs/v1/p/catalog.yaml": "old\n"})
	c := &Cache{Dir: t.TempDir(), URL: func(owner, name string) string { return remote.Dir }}
	ctx := t.Context()
	dir, err := c.Fetch(ctx, "octo", "catalog", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	who, when := Signature{Name: "catalogbot", Email: "bot@example.invalid"}, time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	files := map[string][]byte{"catalogs/v1/p/catalog.yaml": []byte("new\n"), "operators/p/catalog-templates/t.yaml": []byte("t\n")}
	sha, err := CommitFiles(dir, base, files, who, "release\n", when)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CommitFiles(dir, base, files, who, "release\n", when)
	if err != nil || again != sha {
		t.Fatalf("the same commit twice: %s and %s (%v)", sha, again, err)
	}
	for _, bad := range []string{"../x", "a/../../x", ".git/config", "a//b", "./a"} {
		if _, err := CommitFiles(dir, base, map[string][]byte{bad: nil}, who, "bad\n", when); err == nil {
			t.Errorf("CommitFiles took %q", bad)
		}
	}
	for i := 0; i < 2; i++ { // the second push finds the branch at the commit already
		if err := c.Push(ctx, "octo", "catalog", "", sha, "release/p-1", ""); err != nil {
			t.Fatalf("push %d: %v", i+1, err)
		}
	}
	remote.Git("fsck", "--strict")
	if got := remote.Git("ls-tree", "-r", "--name-only", "release/p-1"); got != "README.md\ncatalogs/v1/p/catalog.yaml\noperators/p/catalog-templates/t.yaml\noperators/p/ci.yaml" {
		t.Errorf("tree:\n%s", got)
	}
	if got := remote.Git("show", "release/p-1:catalogs/v1/p/catalog.yaml"); got != "new" {
		t.Errorf("content: %q", got)
	}
	other := remote.Commit("other", base, "admin", "other", map[string]string{"x": "y\n"})
	remote.SetBranch("release/p-2", other)
	if err := c.Push(ctx, "octo", "catalog", "", sha, "release/p-2", ""); !errors.Is(err, ErrBranchMoved) {
		t.Errorf("creating a branch that exists at another commit: %v", err)
	}
	if got := remote.Git("rev-parse", "release/p-2"); got != other {
		t.Errorf("release/p-2 moved to %s", got)
	}
}
