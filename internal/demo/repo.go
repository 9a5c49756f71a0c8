package demo

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/catalog"
)

// gitRepo is the demo's catalog repository: a real git repository in a temp dir, written with go-git.
type gitRepo struct {
	dir  string
	repo *git.Repository
	wt   *git.Worktree
	when time.Time
}

func initRepo(dir string) (*gitRepo, error) {
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		return nil, fmt.Errorf("init demo repository: %w", err)
	}
	wt, err := r.Worktree()
	if err != nil {
		return nil, err
	}
	return &gitRepo{dir: dir, repo: r, wt: wt, when: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}, nil
}

func (g *gitRepo) write(rel string, data []byte) error {
	p := filepath.Join(g.dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o644)
}

// writeCatalog replaces the catalog directory with c, one directory per package.
func (g *gitRepo) writeCatalog(c *catalog.Catalog) error {
	return catalog.WriteDir(filepath.Join(g.dir, "catalog"), c, "json")
}

// commit stages everything and commits it as author.
func (g *gitRepo) commit(msg, author string) (plumbing.Hash, error) {
	if err := g.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		return plumbing.ZeroHash, fmt.Errorf("stage: %w", err)
	}
	g.when = g.when.Add(time.Minute)
	sig := &object.Signature{Name: author, Email: author + "@users.noreply.example.com", When: g.when}
	h, err := g.wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %q: %w", msg, err)
	}
	return h, nil
}

func (g *gitRepo) branch(name string, from plumbing.Hash) error {
	ref := plumbing.NewHashReference(plumbing.NewBranchReferenceName(name), from)
	if err := g.repo.Storer.SetReference(ref); err != nil {
		return err
	}
	return g.repo.CreateBranch(&config.Branch{Name: name, Merge: ref.Name()})
}

// branchWith makes a branch from a commit whose one commit writes the catalog c, and leaves it checked out.
func (g *gitRepo) branchWith(name string, from plumbing.Hash, c *catalog.Catalog, msg, author string) (plumbing.Hash, error) {
	if err := g.branch(name, from); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := g.checkout(name); err != nil {
		return plumbing.ZeroHash, err
	}
	if err := g.writeCatalog(c); err != nil {
		return plumbing.ZeroHash, err
	}
	return g.commit(msg, author)
}

func (g *gitRepo) checkout(branch string) error {
	return g.wt.Checkout(&git.CheckoutOptions{Branch: plumbing.NewBranchReferenceName(branch), Force: true})
}

// fastForward moves main to head, but only if main is still at base: the tested head SHA is what lands.
func (g *gitRepo) fastForward(base, head plumbing.Hash) error {
	main, err := g.repo.Reference(plumbing.NewBranchReferenceName("main"), true)
	if err != nil {
		return err
	}
	if main.Hash() != base {
		return fmt.Errorf("main moved from %s to %s since the pipeline ran: not merging", base, main.Hash())
	}
	if err := g.repo.Storer.CheckAndSetReference(plumbing.NewHashReference(main.Name(), head), main); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	return g.checkout("main")
}
