package gitcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
)

// Signature is a commit's author and committer.
type Signature struct{ Name, Email string }

// CommitDir writes, in the clone at dir, a commit on parent whose tree is parent's with the directory at
// path (slash-separated, relative to the root) replaced by the regular files under src, and returns its
// SHA. Nothing outside path changes; anything but directories and regular files under src is refused.
func CommitDir(dir, parent, path, src string, who Signature, message string, when time.Time) (string, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if slices.Contains(parts, "..") || slices.Contains(parts, ".") || slices.Contains(parts, "") {
		return "", fmt.Errorf("commit %s: bad path %q", src, path)
	}
	sha, err := commitOn(dir, parent, who, message, when, func(st storer.EncodedObjectStorer, tree plumbing.Hash) (plumbing.Hash, error) {
		sub, err := writeDirTree(st, src)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		return replaceSubtree(st, tree, parts, sub)
	})
	if err != nil {
		return "", fmt.Errorf("commit %s as %s: %w", src, path, err)
	}
	return sha, nil
}

// commitOn writes, in the clone at dir, a commit on parent whose tree is what edit makes of parent's
// tree, and returns its SHA.
func commitOn(dir, parent string, who Signature, message string, when time.Time,
	edit func(st storer.EncodedObjectStorer, tree plumbing.Hash) (plumbing.Hash, error)) (string, error) {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", dir, err)
	}
	pc, err := r.CommitObject(plumbing.NewHash(parent))
	if err != nil {
		return "", fmt.Errorf("commit %s in %s: %w", short(parent), dir, err)
	}
	root, err := edit(r.Storer, pc.TreeHash)
	if err != nil {
		return "", err
	}
	sig := object.Signature{Name: who.Name, Email: who.Email, When: when}
	c := &object.Commit{Author: sig, Committer: sig, Message: message, TreeHash: root, ParentHashes: []plumbing.Hash{pc.Hash}}
	h, err := gitrepo.Store(r.Storer, c)
	if err != nil {
		return "", err
	}
	return h.String(), nil
}

// writeDirTree stores the files under src as blobs and trees and returns the root tree's hash.
func writeDirTree(st storer.EncodedObjectStorer, src string) (plumbing.Hash, error) {
	entries, err := os.ReadDir(src)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", src, err)
	}
	var t object.Tree
	for _, e := range entries {
		p := filepath.Join(src, e.Name())
		switch {
		case e.IsDir():
			h, err := writeDirTree(st, p)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: filemode.Dir, Hash: h})
		case e.Type().IsRegular():
			h, err := writeBlob(st, p)
			if err != nil {
				return plumbing.ZeroHash, err
			}
			t.Entries = append(t.Entries, object.TreeEntry{Name: e.Name(), Mode: filemode.Regular, Hash: h})
		default:
			return plumbing.ZeroHash, fmt.Errorf("commit %s: not a regular file or directory", p)
		}
	}
	return gitrepo.StoreTree(st, &t)
}

func writeBlob(st storer.EncodedObjectStorer, path string) (plumbing.Hash, error) {
	f, err := os.Open(path)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", path, err)
	}
	defer f.Close()
	h, err := storeBlob(st, f)
	if err != nil {
		return plumbing.ZeroHash, fmt.Errorf("commit %s: %w", path, err)
	}
	return h, nil
}

// storeBlob stores what r reads as a blob.
func storeBlob(st storer.EncodedObjectStorer, r io.Reader) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return plumbing.ZeroHash, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// CommitFiles writes, in the clone at dir, a commit on parent whose tree is parent's with each file of
// files (slash-separated paths relative to the root) set to its content as a regular file, and returns
// its SHA. The commit is a function of its inputs: the same files, message and time on the same parent
// give the same SHA, so a commit computed again after a restart is the one pushed before.
func CommitFiles(dir, parent string, files map[string][]byte, who Signature, message string, when time.Time) (string, error) {
	sha, err := commitOn(dir, parent, who, message, when, func(st storer.EncodedObjectStorer, root plumbing.Hash) (plumbing.Hash, error) {
		for _, name := range slices.Sorted(maps.Keys(files)) {
			parts := strings.Split(name, "/")
			if slices.Contains(parts, "..") || slices.Contains(parts, ".") || slices.Contains(parts, "") || slices.Contains(parts, ".git") {
				return plumbing.ZeroHash, fmt.Errorf("bad path %q", name)
			}
			blob, err := storeBlob(st, bytes.NewReader(files[name]))
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("%s: %w", name, err)
			}
			if root, err = replaceEntry(st, root, parts, filemode.Regular, blob); err != nil {
				return plumbing.ZeroHash, fmt.Errorf("%s: %w", name, err)
			}
		}
		return root, nil
	})
	if err != nil {
		return "", fmt.Errorf("commit on %s: %w", short(parent), err)
	}
	return sha, nil
}

// replaceSubtree returns the hash of tree (ZeroHash: an empty tree) with the entry at parts set to the
// directory sub.
func replaceSubtree(st storer.EncodedObjectStorer, tree plumbing.Hash, parts []string, sub plumbing.Hash) (plumbing.Hash, error) {
	return replaceEntry(st, tree, parts, filemode.Dir, sub)
}

// replaceEntry returns the hash of tree (ZeroHash: an empty tree) with the entry at parts set to hash h of
// mode (a directory or a regular file); the directories above it are created as needed.
func replaceEntry(st storer.EncodedObjectStorer, tree plumbing.Hash, parts []string, mode filemode.FileMode, sub plumbing.Hash) (plumbing.Hash, error) {
	var t object.Tree
	if !tree.IsZero() {
		cur, err := object.GetTree(st, tree)
		if err != nil {
			return plumbing.ZeroHash, err
		}
		t.Entries = slices.Clone(cur.Entries)
	}
	i := slices.IndexFunc(t.Entries, func(e object.TreeEntry) bool { return e.Name == parts[0] })
	h := sub
	if len(parts) > 1 {
		var below plumbing.Hash
		if i >= 0 {
			if t.Entries[i].Mode != filemode.Dir {
				return plumbing.ZeroHash, fmt.Errorf("%s is not a directory", parts[0])
			}
			below = t.Entries[i].Hash
		}
		var err error
		if h, err = replaceEntry(st, below, parts[1:], mode, sub); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%s/%w", parts[0], err)
		}
	}
	e := object.TreeEntry{Name: parts[0], Mode: mode, Hash: h}
	if len(parts) > 1 {
		e.Mode = filemode.Dir
	}
	if i >= 0 {
		t.Entries[i] = e
	} else {
		t.Entries = append(t.Entries, e)
	}
	return gitrepo.StoreTree(st, &t)
}

// ErrBranchMoved is returned by Push when the branch is no longer at the commit the pushed one builds on.
var ErrBranchMoved = errors.New("the branch moved")

// Push updates branch on the remote to sha, only when the branch is still at old (sha must descend from
// it; "" creates the branch): never a force push. A branch already at sha is left as it is. When the branch moved meanwhile the error wraps ErrBranchMoved.
func (c *Cache) Push(ctx context.Context, owner, name, token, sha, branch, old string) error {
	key := strings.ToLower(owner + "/" + name)
	l := c.lock(key)
	l.Lock()
	defer l.Unlock()
	return PushBranch(ctx, c.Path(owner, name), owner+"/"+name, token, sha, branch, old)
}

// PushBranch is Push from the repository at dir (the cache's clone, or a workflow's checkout) to its
// remote origin, whose name in errors is remote; token, when not empty, is the HTTPS password (an
// installation's or a workflow's token). The commit sha must be in dir.
func PushBranch(ctx context.Context, dir, remote, token, sha, branch, old string) error {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	// go-git pushes refs, not bare commits: a temporary local ref names the commit.
	local := plumbing.ReferenceName("refs/catalogbot/push/" + sha)
	if err := r.Storer.SetReference(plumbing.NewHashReference(local, plumbing.NewHash(sha))); err != nil {
		return fmt.Errorf("push %s: %w", short(sha), err)
	}
	defer r.Storer.RemoveReference(local)
	dst := plumbing.NewBranchReferenceName(branch)
	var auth transport.AuthMethod
	if token != "" {
		auth = &http.BasicAuth{Username: "x-access-token", Password: token}
	}
	var at string
	moved := func() error {
		var err error
		if at, err = remoteRef(ctx, r, auth, dst); err != nil {
			return diag.InfraError(fmt.Errorf("push %s to %s %s: %w", short(sha), remote, branch, err))
		}
		switch {
		case at == old || at == sha:
		case old == "":
			return fmt.Errorf("push %s to %s: %w: %s exists already, at %s", short(sha), remote, ErrBranchMoved, branch, short(at))
		default:
			return fmt.Errorf("push %s to %s: %w: %s is at %s, not %s", short(sha), remote, ErrBranchMoved, branch, short(at), short(old))
		}
		return nil
	}
	if err := moved(); err != nil || at == sha {
		return err // already there: an earlier push of the same commit landed
	}
	// Not forced: the remote refuses anything but a fast-forward, so a branch that moved after the check
	// above is never overwritten.
	err = r.PushContext(ctx, &git.PushOptions{RemoteName: "origin", Auth: auth,
		RefSpecs: []config.RefSpec{config.RefSpec(string(local) + ":" + string(dst))}})
	if err == nil {
		return nil
	}
	if merr := moved(); merr != nil || at == sha {
		return merr
	}
	return diag.InfraError(fmt.Errorf("push %s to %s %s: %w", short(sha), remote, branch, err))
}

// remoteRef is the SHA of ref on origin ("" when it does not exist).
func remoteRef(ctx context.Context, r *git.Repository, auth transport.AuthMethod, ref plumbing.ReferenceName) (string, error) {
	rem, err := r.Remote("origin")
	if err != nil {
		return "", err
	}
	refs, err := rem.ListContext(ctx, &git.ListOptions{Auth: auth})
	if err != nil {
		return "", fmt.Errorf("list the remote's refs: %w", err)
	}
	for _, x := range refs {
		if x.Name() == ref {
			return x.Hash().String(), nil
		}
	}
	return "", nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
