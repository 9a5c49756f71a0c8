// Package gitcache keeps one clone (a .git directory, no checkout) per repository under a cache directory and fetches into it with
// go-git: branches, and the pull request heads the bot is asked about. Fetches of one repository are
// serialized; reads (the pipeline's) need no lock, since git objects never change once written.
package gitcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/catalogbot/catalogbot/diag"
)

// GitHubURL is the default remote: https://github.com/OWNER/NAME.git.
func GitHubURL(owner, name string) string { return "https://github.com/" + owner + "/" + name + ".git" }

// Cache is a directory of clones.
type Cache struct {
	// Dir holds one repository per OWNER/NAME.
	Dir string
	// URL maps a repository to its git remote (GitHubURL when nil). Tests point it at local bare
	// repositories, since a fake GitHub cannot serve git.
	URL func(owner, name string) string

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (c *Cache) lock(key string) *sync.Mutex {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.locks == nil {
		c.locks = map[string]*sync.Mutex{}
	}
	if c.locks[key] == nil {
		c.locks[key] = &sync.Mutex{}
	}
	return c.locks[key]
}

// Path is where the clone of a repository lives (it may not exist yet).
func (c *Cache) Path(owner, name string) string {
	return filepath.Join(c.Dir, strings.ToLower(owner), strings.ToLower(name))
}

// Has returns the clone's path and whether every commit is already in it (no fetch needed).
func (c *Cache) Has(owner, name string, shas ...string) (string, bool) {
	dir := c.Path(owner, name)
	r, err := git.PlainOpen(dir)
	if err != nil {
		return dir, false
	}
	for _, sha := range shas {
		if len(sha) != 40 {
			return dir, false
		}
		if _, err := r.CommitObject(plumbing.NewHash(sha)); err != nil {
			return dir, false
		}
	}
	return dir, true
}

// PullRef is the remote-tracking ref a pull request's head is fetched to.
func PullRef(number int) string { return fmt.Sprintf("refs/remotes/origin/pull/%d", number) }

// BranchRef is the remote-tracking ref of a branch.
func BranchRef(branch string) string { return "refs/remotes/origin/" + branch }

// Fetch brings the repository's branches (and the heads of the given pull requests) into its clone,
// creating it on first use, and returns the clone's path. When every commit in want is already there
// (perhaps fetched by a concurrent caller), it does not fetch. token, when not empty, is the password for
// HTTPS (a GitHub App installation token).
func (c *Cache) Fetch(ctx context.Context, owner, name, token string, want []string, pulls ...int) (string, error) {
	key := strings.ToLower(owner + "/" + name)
	l := c.lock(key)
	l.Lock()
	defer l.Unlock()
	dir := c.Path(owner, name)
	if len(want) > 0 {
		if _, ok := c.Has(owner, name, want...); ok {
			return dir, nil
		}
	}
	url := GitHubURL(owner, name)
	if c.URL != nil {
		url = c.URL(owner, name)
	}
	r, err := openOrInit(dir, url)
	if err != nil {
		return "", err
	}
	specs := []config.RefSpec{"+refs/heads/*:refs/remotes/origin/*"}
	for _, n := range pulls {
		specs = append(specs, config.RefSpec(fmt.Sprintf("+refs/pull/%d/head:%s", n, PullRef(n))))
	}
	opts := &git.FetchOptions{RemoteName: "origin", RefSpecs: specs, Tags: git.NoTags, Force: true}
	if token != "" {
		opts.Auth = &http.BasicAuth{Username: "x-access-token", Password: token}
	}
	err = r.FetchContext(ctx, opts)
	if err != nil && !errors.Is(err, git.NoErrAlreadyUpToDate) {
		// The message of go-git's error never holds the token (it is in opts.Auth, not the URL).
		return "", diag.InfraError(fmt.Errorf("fetch %s/%s: %w", owner, name, err))
	}
	return dir, nil
}

func openOrInit(dir, url string) (*git.Repository, error) {
	r, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("git cache %s: %w", dir, err)
		}
		// Not bare: gitrepo.Open looks for a .git directory. The work tree stays empty.
		r, err = git.PlainInit(dir, false)
	}
	if err != nil {
		return nil, fmt.Errorf("git cache %s: %w", dir, err)
	}
	rem, err := r.Remote("origin")
	if err == nil && len(rem.Config().URLs) == 1 && rem.Config().URLs[0] == url {
		return r, nil
	}
	if err == nil {
		if err := r.DeleteRemote("origin"); err != nil {
			return nil, fmt.Errorf("git cache %s: %w", dir, err)
		}
	}
	if _, err := r.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{url}}); err != nil {
		return nil, fmt.Errorf("git cache %s: remote %s: %w", dir, url, err)
	}
	return r, nil
}
