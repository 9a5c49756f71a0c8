package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/catalogbot/catalogbot/diag"
)

// Merged is the merge of a pull request's head into its base branch's tip: what GitHub lands when it
// merges the pull request now.
type Merged struct {
	// Commit is the merge commit (parents: the tip, then the head), written into the repository's object
	// store; nil when the merge conflicts.
	Commit *object.Commit
	// Conflicts are the paths both sides changed in ways that do not merge line by line (sorted).
	Conflicts []string
}

// mergeSignature signs every merge commit: with the parents' latest commit time, the same tip and head
// always give the same commit.
func mergeSignature(tip, head *object.Commit) object.Signature {
	when := tip.Committer.When
	if head.Committer.When.After(when) {
		when = head.Committer.When
	}
	return object.Signature{Name: "catalogbot", Email: "catalogbot@users.noreply.github.com", When: when.UTC()}
}

// Merge merges head into tip as git's three-way merge does (from their merge base): a path one side
// changed takes that side; a file both changed merges line by line, and hunks of the two sides that
// overlap or touch conflict unless they are the same change. It refuses what it cannot merge exactly
// rather than guess: histories with several merge bases (criss-cross merges), and binary files or
// symlinks both sides changed, are conflicts too. When head already contains tip the merge's tree is
// head's; when tip contains head it is tip's.
func (r *Repo) Merge(ctx context.Context, tip, head *object.Commit) (*Merged, error) {
	bases, err := tip.MergeBase(head)
	if err != nil {
		return nil, fmt.Errorf("merge base of %s and %s: %w", short(tip.Hash.String()), short(head.Hash.String()), err)
	}
	m := &merger{ctx: ctx, st: r.r.Storer}
	var tree plumbing.Hash
	switch {
	case len(bases) == 0:
		return nil, diag.UsageError(fmt.Errorf("%s and %s have no common history: the pull request's branch does not come from its base branch", short(tip.Hash.String()), short(head.Hash.String())))
	case len(bases) > 1:
		m.conflicts = []string{"(several merge bases: merge the base branch into the pull request's branch)"}
	case bases[0].Hash == tip.Hash:
		tree = head.TreeHash
	case bases[0].Hash == head.Hash:
		tree = tip.TreeHash
	default:
		if tree, err = m.tree("", bases[0].TreeHash, tip.TreeHash, head.TreeHash); err != nil {
			return nil, fmt.Errorf("merging %s into %s: %w", short(head.Hash.String()), short(tip.Hash.String()), err)
		}
	}
	if len(m.conflicts) > 0 {
		slices.Sort(m.conflicts)
		return &Merged{Conflicts: m.conflicts}, nil
	}
	sig := mergeSignature(tip, head)
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree, ParentHashes: []plumbing.Hash{tip.Hash, head.Hash},
		Message: fmt.Sprintf("Merge %s into %s\n", head.Hash, tip.Hash)}
	h, err := Store(r.r.Storer, c)
	if err != nil {
		return nil, fmt.Errorf("writing the merge of %s into %s: %w", short(head.Hash.String()), short(tip.Hash.String()), err)
	}
	commit, err := object.GetCommit(r.r.Storer, h)
	if err != nil {
		return nil, err
	}
	return &Merged{Commit: commit}, nil
}

// merger writes the merged trees and blobs and collects the conflicting paths.
type merger struct {
	ctx       context.Context
	st        storer.EncodedObjectStorer
	conflicts []string
}

// entry is one tree entry of a side (the zero entry: absent).
type entry struct {
	hash plumbing.Hash
	mode filemode.FileMode
}

func (e entry) absent() bool { return e.hash.IsZero() }

// tree merges the trees o (the merge base), a (the tip) and b (the head) at dir; a zero hash is an absent
// tree. It returns the merged tree's hash (zero: empty, to be dropped).
func (m *merger) tree(dir string, o, a, b plumbing.Hash) (plumbing.Hash, error) {
	if err := m.ctx.Err(); err != nil {
		return plumbing.ZeroHash, err
	}
	sides := [3]map[string]entry{}
	names := map[string]bool{}
	for i, h := range [3]plumbing.Hash{o, a, b} {
		sides[i] = map[string]entry{}
		if h.IsZero() {
			continue
		}
		t, err := object.GetTree(m.st, h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("tree %s: %w", dir, err)
		}
		for _, e := range t.Entries {
			sides[i][e.Name] = entry{e.Hash, e.Mode}
			names[e.Name] = true
		}
	}
	var out object.Tree
	for _, name := range slices.Sorted(maps.Keys(names)) {
		p := path.Join(dir, name)
		e, err := m.entry(p, sides[0][name], sides[1][name], sides[2][name])
		if err != nil {
			return plumbing.ZeroHash, err
		}
		if !e.absent() {
			out.Entries = append(out.Entries, object.TreeEntry{Name: name, Mode: e.mode, Hash: e.hash})
		}
	}
	if len(out.Entries) == 0 {
		return plumbing.ZeroHash, nil
	}
	return StoreTree(m.st, &out)
}

// entry merges one path's entries.
func (m *merger) entry(p string, o, a, b entry) (entry, error) {
	switch {
	case a == b:
		return a, nil
	case o == a:
		return b, nil
	case o == b:
		return a, nil
	}
	// Directories (one side may have deleted one) merge entry by entry.
	dirOrAbsent := func(e entry) bool { return e.absent() || e.mode == filemode.Dir }
	if dirOrAbsent(o) && dirOrAbsent(a) && dirOrAbsent(b) {
		h, err := m.tree(p, o.hash, a.hash, b.hash)
		return entry{h, filemode.Dir}, err
	}
	isText := func(e entry) bool {
		return !e.absent() && (e.mode == filemode.Regular || e.mode == filemode.Executable)
	}
	if isText(o) && isText(a) && isText(b) && a.mode == b.mode {
		merged, ok, err := m.blobs(o.hash, a.hash, b.hash)
		if err != nil {
			return entry{}, fmt.Errorf("merging %s: %w", p, err)
		}
		if ok {
			return entry{merged, a.mode}, nil
		}
	}
	m.conflicts = append(m.conflicts, p)
	return entry{}, nil
}

// blobs merges three versions of a text file line by line (merge3); ok is false when they conflict or
// one is binary.
func (m *merger) blobs(o, a, b plumbing.Hash) (plumbing.Hash, bool, error) {
	var texts [3][]byte
	for i, h := range [3]plumbing.Hash{o, a, b} {
		blob, err := object.GetBlob(m.st, h)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		rd, err := blob.Reader()
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		texts[i], err = io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if bytes.IndexByte(texts[i], 0) >= 0 {
			return plumbing.ZeroHash, false, nil // binary: git does not merge it line by line either
		}
	}
	merged, ok := merge3(string(texts[0]), string(texts[1]), string(texts[2]))
	if !ok {
		return plumbing.ZeroHash, false, nil
	}
	obj := m.st.NewEncodedObject()
	obj.SetType(plumbing.BlobObject)
	w, err := obj.Writer()
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	if _, err := io.WriteString(w, merged); err != nil {
		w.Close()
		return plumbing.ZeroHash, false, err
	}
	if err := w.Close(); err != nil {
		return plumbing.ZeroHash, false, err
	}
	h, err := m.st.SetEncodedObject(obj)
	return h, err == nil, err
}

// Encoder is a git object that encodes itself (a commit, a tree).
type Encoder interface {
	Encode(plumbing.EncodedObject) error
}

// Store writes o into st and returns its hash.
func Store(st storer.EncodedObjectStorer, o Encoder) (plumbing.Hash, error) {
	obj := st.NewEncodedObject()
	if err := o.Encode(obj); err != nil {
		return plumbing.ZeroHash, err
	}
	return st.SetEncodedObject(obj)
}

// StoreTree sorts a tree's entries the way git does (a directory sorts as its name followed by "/") and
// writes it into st.
func StoreTree(st storer.EncodedObjectStorer, t *object.Tree) (plumbing.Hash, error) {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	slices.SortFunc(t.Entries, func(a, b object.TreeEntry) int { return strings.Compare(key(a), key(b)) })
	return Store(st, t)
}
