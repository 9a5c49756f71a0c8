package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing/fstest"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Repo is a local git repository (work tree or bare) read through go-git.
type Repo struct {
	Path string
	r    *git.Repository
}

// Open opens the repository at path (a work tree or a bare repository).
func Open(path string) (*Repo, error) {
	// A bare repository or a work tree's root opens as is; a directory inside a work tree finds its .git.
	r, err := git.PlainOpen(path)
	if err != nil {
		r, err = git.PlainOpenWithOptions(path, &git.PlainOpenOptions{DetectDotGit: true})
	}
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("open git repository %s: %w", path, err))
	}
	return &Repo{Path: path, r: r}, nil
}

// Resolve turns a revision (branch, tag, SHA, HEAD~1, ...) into a commit.
func (r *Repo) Resolve(rev string) (*object.Commit, error) {
	h, err := r.r.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("resolve revision %q in %s: %w", rev, r.Path, err))
	}
	c, err := r.r.CommitObject(*h)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("read commit %s: %w", h, err))
	}
	return c, nil
}

// SHA resolves rev to the full hex SHA of a commit.
func (r *Repo) SHA(rev string) (string, error) {
	c, err := r.Resolve(rev)
	if err != nil {
		return "", err
	}
	return c.Hash.String(), nil
}

// maxConfigFile bounds files read straight from git objects (config, owners files).
const maxConfigFile = 1 << 20

// ReadFile reads a file at a commit; ok is false when the file does not exist there.
func (r *Repo) ReadFile(c *object.Commit, path string) (data []byte, ok bool, err error) {
	f, err := c.File(path)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", path, c.Hash.String()[:12], err)
	}
	if f.Size > maxConfigFile {
		return nil, true, diag.UsageError(fmt.Errorf("%s at %s is %d bytes, more than the %d-byte limit", path, c.Hash.String()[:12], f.Size, maxConfigFile))
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", path, c.Hash.String()[:12], err)
	}
	defer rd.Close()
	data, err = io.ReadAll(io.LimitReader(rd, maxConfigFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("read %s at %s: %w", path, c.Hash.String()[:12], err)
	}
	return data, true, nil
}

// TreeFS returns the files under dir at commit c whose paths (relative to dir) pass include, as an fs.FS.
// Symlinks are not followed (their target path is the content, as git stores it).
func (r *Repo) TreeFS(c *object.Commit, dir string, include func(string) bool) (fs.FS, error) {
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", c.Hash, err)
	}
	if dir != "" && dir != "." {
		tree, err = tree.Tree(dir)
		if errors.Is(err, object.ErrDirectoryNotFound) {
			return fstest.MapFS{}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s at %s: %w", dir, short(c.Hash.String()), err)
		}
	}
	out := fstest.MapFS{}
	err = tree.Files().ForEach(func(f *object.File) error {
		if !f.Mode.IsFile() || !include(f.Name) {
			return nil
		}
		rd, err := f.Reader()
		if err != nil {
			return fmt.Errorf("read %s at %s: %w", f.Name, short(c.Hash.String()), err)
		}
		defer rd.Close()
		data, err := io.ReadAll(io.LimitReader(rd, catalog.DefaultMaxFileSize+1))
		if err != nil {
			return fmt.Errorf("read %s at %s: %w", f.Name, short(c.Hash.String()), err)
		}
		out[f.Name] = &fstest.MapFile{Data: data, Mode: 0o644}
		return nil
	})
	return out, err
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
