package gitrepo

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func runGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWorkTreeChanged(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT NOT INSTALLED")
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "-q")
	cat := filepath.Join(repo, "catalog")
	write(t, filepath.Join(cat, "a", "catalog.json"), "{}")
	write(t, filepath.Join(cat, "b", "catalog.json"), "{}")
	write(t, filepath.Join(repo, "README.md"), "x")
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-qm", "base")

	write(t, filepath.Join(cat, "a", "catalog.json"), `{"x":1}`) // modified, unstaged
	write(t, filepath.Join(cat, "c", "catalog.json"), "{}")      // untracked
	write(t, filepath.Join(repo, "README.md"), "y")              // outside the catalog
	write(t, filepath.Join(cat, "b", "catalog.json"), `{"y":1}`)
	runGit(t, repo, "add", filepath.Join("catalog", "b", "catalog.json")) // staged

	got, err := WorkTreeChanged(context.Background(), cat, "HEAD", false)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	if want := []string{"a/catalog.json", "b/catalog.json", "c/catalog.json"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changed since HEAD = %v, want %v", got, want)
	}
	got, err = WorkTreeChanged(context.Background(), cat, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"b/catalog.json"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("staged = %v, want %v", got, want)
	}
	if _, err := WorkTreeChanged(context.Background(), cat, "no-such-ref", false); err == nil {
		t.Fatal("a bad revision must be an error")
	}
}

// Without a git executable, the work-tree diffs say what they need, and TopLevel still finds the root.
func TestWorkTreeVerbsWithoutGitSaySo(t *testing.T) {
	repo := t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(repo, "catalog", "a")
	write(t, filepath.Join(cat, "catalog.json"), "{}")
	t.Setenv("PATH", t.TempDir())
	_, err := WorkTreeChanged(context.Background(), cat, "HEAD", true)
	if err == nil || !strings.Contains(err.Error(), "git executable is not on PATH: validate --staged and --changed-since") {
		t.Fatalf("WorkTreeChanged without git: %v", err)
	}
	if _, _, err := Before(context.Background(), cat, "HEAD", false)("catalog.json"); !errors.Is(err, ErrNoGit) {
		t.Fatalf("Before without git: %v", err)
	}
	top, err := TopLevel(context.Background(), cat)
	if err != nil || top != repo {
		t.Fatalf("TopLevel without git = %q, %v; want %s", top, err, repo)
	}
	if _, err := TopLevel(context.Background(), "/"); err == nil {
		t.Fatal("TopLevel of / without git found a work tree")
	}
}
