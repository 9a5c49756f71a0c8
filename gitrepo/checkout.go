package gitrepo

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Checkout writes the tree of commit c into a new temporary directory and returns it with a cleanup
// function. It reads git objects through go-git (no git executable), each blob streamed from its pack
// (objectStore), and walks the tree once, writing each file as it comes (go-git's own Worktree.Checkout
// is quadratic on catalog-sized trees). Every write goes through an os.Root of the directory; an entry
// whose name could leave it (empty, ".", "..", holding a slash or NUL) or is .git is refused, as git
// refuses it. Symlinks are written as symlinks, after every file and directory, so no write follows one;
// gitlinks (submodules) become empty directories, as git checks them out without their submodule.
func (r *Repo) Checkout(ctx context.Context, c *object.Commit) (string, func(), error) {
	dir, err := os.MkdirTemp("", "catalogbot-"+c.Hash.String()[:12]+"-")
	if err != nil {
		return "", nil, fmt.Errorf("checkout %s: %w", short(c.Hash.String()), err)
	}
	cleanup := func() { os.RemoveAll(dir) }
	if err := r.checkoutInto(ctx, c, dir); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("checkout %s: %w", short(c.Hash.String()), err)
	}
	return dir, cleanup, nil
}

// symlink is a symlink entry, written once every file is.
type symlink struct{ name, target string }

func (r *Repo) checkoutInto(ctx context.Context, c *object.Commit, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tree, err := c.Tree()
	if err != nil {
		return fmt.Errorf("tree: %w", err)
	}
	var links []symlink
	w := &writer{objects: r.r.Storer, root: root, links: &links, commit: c.Hash}
	if err := w.tree(ctx, tree, ".", 0); err != nil {
		return err
	}
	for _, l := range links {
		if err := root.Symlink(l.target, l.name); err != nil {
			return fmt.Errorf("symlink %s: %w", l.name, err)
		}
	}
	return nil
}

// writer writes a commit's tree into root.
type writer struct {
	objects storer.EncodedObjectStorer
	root    *os.Root
	links   *[]symlink
	commit  plumbing.Hash // whose tree it writes
}

// tree writes the entries of tree under the directory name (relative to root), depth levels down; a
// tree deeper than MaxTreeDepth is refused.
func (w *writer) tree(ctx context.Context, tree *object.Tree, name string, depth int) error {
	if depth > MaxTreeDepth {
		return tooDeep(w.commit, name)
	}
	for _, e := range tree.Entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		p := path.Join(name, e.Name)
		if !safeEntryName(e.Name) {
			return fmt.Errorf("tree entry %q in %s: not a name git checks out (it could leave the checkout)", e.Name, name)
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := object.GetTree(w.objects, e.Hash)
			if err != nil {
				return fmt.Errorf("tree %s: %w", p, err)
			}
			if err := w.root.Mkdir(p, 0o755); err != nil {
				return fmt.Errorf("mkdir %s: %w", p, err)
			}
			if err := w.tree(ctx, sub, p, depth+1); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			perm := os.FileMode(0o644)
			if e.Mode == filemode.Executable {
				perm = 0o755
			}
			if err := w.blob(e.Hash, p, perm); err != nil {
				return err
			}
		case filemode.Symlink:
			target, err := w.small(e.Hash, p)
			if err != nil {
				return err
			}
			*w.links = append(*w.links, symlink{name: p, target: string(target)})
		case filemode.Submodule:
			if err := w.root.Mkdir(p, 0o755); err != nil {
				return fmt.Errorf("mkdir %s: %w", p, err)
			}
		default:
			return fmt.Errorf("tree entry %s: unknown mode %o", p, uint32(e.Mode))
		}
	}
	return nil
}

// safeEntryName is whether a tree entry's name names one entry of its directory and is not .git (any
// case), as git's own checks require.
func safeEntryName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00") && !strings.EqualFold(n, ".git")
}

// blob streams blob h into the new file p (refused if it exists: a tree names each path once).
func (w *writer) blob(h plumbing.Hash, p string, perm os.FileMode) error {
	b, err := object.GetBlob(w.objects, h)
	if err != nil {
		return fmt.Errorf("blob %s: %w", p, err)
	}
	rd, err := b.Reader()
	if err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	defer rd.Close()
	f, err := w.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if _, err := io.Copy(f, rd); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// maxSymlinkTarget bounds a symlink's target (git's own limit is the system's PATH_MAX).
const maxSymlinkTarget = 4096

// small reads the small blob h (a symlink's target) of entry p.
func (w *writer) small(h plumbing.Hash, p string) ([]byte, error) {
	b, err := object.GetBlob(w.objects, h)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", p, err)
	}
	if b.Size > maxSymlinkTarget {
		return nil, fmt.Errorf("symlink %s: target of %d bytes, more than %d", p, b.Size, maxSymlinkTarget)
	}
	rd, err := b.Reader()
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, maxSymlinkTarget))
}
