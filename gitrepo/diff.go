package gitrepo

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
)

// Changed lists the paths that differ between two commits (added, modified, deleted; renames as both).
func (r *Repo) Changed(ctx context.Context, base, head *object.Commit) ([]string, error) {
	bt, err := base.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", base.Hash, err)
	}
	ht, err := head.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", head.Hash, err)
	}
	if err := boundChangeDepth(ctx, r.r.Storer, head.Hash, bt.Hash, ht.Hash); err != nil {
		return nil, err
	}
	changes, err := object.DiffTreeWithOptions(ctx, bt, ht, &object.DiffTreeOptions{})
	if err != nil {
		return nil, fmt.Errorf("diff %s..%s: %w", base.Hash, head.Hash, err)
	}
	seen := map[string]bool{}
	var paths []string
	for _, c := range changes {
		for _, p := range []string{c.From.Name, c.To.Name} {
			if p != "" && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
		}
	}
	return paths, nil
}

// MergeBase returns the best common ancestor of two revisions.
func (r *Repo) MergeBase(a, b string) (string, error) {
	ca, err := r.Resolve(a)
	if err != nil {
		return "", err
	}
	cb, err := r.Resolve(b)
	if err != nil {
		return "", err
	}
	bases, err := ca.MergeBase(cb)
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", short(a), short(b), err)
	}
	if len(bases) == 0 {
		return "", fmt.Errorf("%s and %s have no common history", short(a), short(b))
	}
	return bases[0].Hash.String(), nil
}

// TouchedTopDirs lists the top-level directories under root (a catalog directory: one per package) whose
// files differ between revisions a and b, and the changed paths outside root.
func (r *Repo) TouchedTopDirs(ctx context.Context, a, b, root string) (dirs map[string]bool, outside []string, err error) {
	ca, err := r.Resolve(a)
	if err != nil {
		return nil, nil, err
	}
	cb, err := r.Resolve(b)
	if err != nil {
		return nil, nil, err
	}
	paths, err := r.Changed(ctx, ca, cb)
	if err != nil {
		return nil, nil, err
	}
	prefix := strings.Trim(root, "/") + "/"
	dirs = map[string]bool{}
	for _, p := range paths {
		if rel, ok := strings.CutPrefix(p, prefix); ok {
			top, _, _ := strings.Cut(rel, "/")
			dirs[top] = true
		} else {
			outside = append(outside, p)
		}
	}
	return dirs, outside, nil
}
