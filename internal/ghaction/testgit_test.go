package ghaction

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// testGit is a repository in dir whose commits are made on a fixed clock, a minute apart (same SHAs on
// every run).
type testGit struct {
	t    *testing.T
	repo *git.Repository
	wt   *git.Worktree
	dir  string
	when time.Time
}

// newTestGit initialises dir; branch "" keeps go-git's default branch name.
func newTestGit(t *testing.T, dir, branch string) *testGit {
	t.Helper()
	opts := &git.PlainInitOptions{}
	if branch != "" {
		opts.InitOptions.DefaultBranch = plumbing.NewBranchReferenceName(branch)
	}
	r, err := git.PlainInitWithOptions(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &testGit{t: t, repo: r, wt: wt, dir: dir, when: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

// linkPrefix marks a commit value that is a symbolic link's target, not file content.
const linkPrefix = "\x00symlink\x00"

// commit writes files (slash paths; a value starting with linkPrefix is a symbolic link to the rest) and
// commits everything as author; it returns the commit's SHA.
func (g *testGit) commit(author string, files map[string]string) string {
	g.t.Helper()
	for p, c := range files {
		full := filepath.Join(g.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			g.t.Fatal(err)
		}
		var err error
		if target, ok := strings.CutPrefix(c, linkPrefix); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			g.t.Fatal(err)
		}
	}
	if err := g.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		g.t.Fatal(err)
	}
	g.when = g.when.Add(time.Minute)
	sig := &object.Signature{Name: author, Email: author + "@example.com", When: g.when}
	h, err := g.wt.Commit("change", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		g.t.Fatal(err)
	}
	return h.String()
}

// checkout creates branch at the commit from and checks it out (the work tree becomes from's).
func (g *testGit) checkout(branch, from string) {
	g.t.Helper()
	if err := g.wt.Checkout(&git.CheckoutOptions{Hash: plumbing.NewHash(from), Branch: plumbing.NewBranchReferenceName(branch), Create: true, Force: true}); err != nil {
		g.t.Fatal(err)
	}
}
