package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing/fstest"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Repo is a local git repository (work tree or bare) read through go-git, its objects through
// objectStore (blobs stream from their packs; storage.go).
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
	if err == nil {
		r, err = streaming(r)
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
		h, err = r.resolveFresh(rev)
	}
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("resolve revision %q in %s: %w", rev, r.Path, err))
	}
	c, err := r.r.CommitObject(*h)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("read commit %s: %w", h, err))
	}
	return c, nil
}

// resolveFresh looks rev up again in a fresh handle of the repository, a few times. A shared clone (the
// App's cache) is fetched into while checks read it: fetches take turns, reads do not wait for them, and
// a handle lists the pack files once, so a commit a concurrent fetch has just brought in (or is renaming
// into place) can be missing from an older handle. A revision that is really missing stays missing and
// costs the caller about 100 ms more.
func (r *Repo) resolveFresh(rev string) (*plumbing.Hash, error) {
	var err error
	for i := 0; i < 4; i++ {
		if i > 0 {
			time.Sleep(time.Duration(i) * 15 * time.Millisecond)
		}
		fresh, oerr := Open(r.Path)
		if oerr != nil {
			return nil, oerr
		}
		var h *plumbing.Hash
		if h, err = fresh.r.ResolveRevision(plumbing.Revision(rev)); err == nil {
			r.r = fresh.r
			return h, nil
		}
	}
	return nil, err
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

// TreeFS returns the files under dir at commit c whose paths (relative to dir) pass include, as an fs.FS
// that holds what a checkout of c (Checkout) would: a symbolic link (mode 120000) as a link to the target
// git stores (never followed by a listing: filetree.ListCatalog refuses it as it refuses the link in a
// checkout), a gitlink (a submodule) as an empty directory.
func (r *Repo) TreeFS(c *object.Commit, dir string, include func(string) bool) (fs.FS, error) {
	return r.treeFS(c, dir, include, func(string) bool { return true })
}

// TreeNames is TreeFS of every entry under dir at commit c, holding the content of the files read
// accepts only (the others are empty): enough to list a catalog (filetree.ListCatalog reads its
// .indexignore files only) without reading its blobs.
func (r *Repo) TreeNames(c *object.Commit, dir string, read func(string) bool) (fs.FS, error) {
	return r.treeFS(c, dir, func(string) bool { return true }, read)
}

func (r *Repo) treeFS(c *object.Commit, dir string, include, read func(string) bool) (fs.FS, error) {
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
	walk := object.NewTreeWalker(tree, true, nil)
	defer walk.Close()
	for {
		name, e, err := walk.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("tree %s at %s: %w", dir, short(c.Hash.String()), err)
		}
		if e.Mode == filemode.Dir || !include(name) {
			continue
		}
		switch e.Mode {
		case filemode.Submodule:
			out[name] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
		case filemode.Symlink:
			target, err := r.blob(e.Hash, maxSymlinkTarget)
			if err != nil {
				return nil, fmt.Errorf("symlink %s at %s: %w", name, short(c.Hash.String()), err)
			}
			out[name] = &fstest.MapFile{Data: target, Mode: fs.ModeSymlink | 0o777}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			var data []byte
			if read(name) {
				if data, err = r.blob(e.Hash, catalog.DefaultMaxFileSize); err != nil {
					return nil, fmt.Errorf("read %s at %s: %w", name, short(c.Hash.String()), err)
				}
			}
			out[name] = &fstest.MapFile{Data: data, Mode: 0o644}
		default:
			return nil, fmt.Errorf("tree entry %s at %s: unknown mode %o", name, short(c.Hash.String()), uint32(e.Mode))
		}
	}
}

// blob reads blob h, up to limit+1 bytes (a reader of a larger one finds it too large).
func (r *Repo) blob(h plumbing.Hash, limit int64) ([]byte, error) {
	b, err := r.r.BlobObject(h)
	if err != nil {
		return nil, err
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, limit+1))
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
