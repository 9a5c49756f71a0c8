package gitrepo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/diag"
)

// nestedTree is a file at the bottom of depth directories named a: a/a/.../a/f.
func (o *objects) nestedTree(depth int) plumbing.Hash {
	h := o.tree(object.TreeEntry{Name: "f", Mode: filemode.Regular, Hash: o.blob("x")})
	for range depth {
		h = o.tree(object.TreeEntry{Name: "a", Mode: filemode.Dir, Hash: h})
	}
	return h
}

// A pull request's tree nesting directories deeper than git allows is refused before any walk whose cost
// grows with the square of the depth (go-git's tree diff took 3.8 s and 7.9 GB of allocation at 20,000
// levels, a checkout ran past a minute): by Changed, the first walk of a change, and by Checkout, each
// naming the commit and the path, as the content's fault (Invalid). Git's own limit still passes.
func TestDeepTreesAreRefused(t *testing.T) {
	o, dir := newObjects(t)
	atLimit := o.nestedTree(MaxTreeDepth)
	base := o.commit(o.tree(object.TreeEntry{Name: "g", Mode: filemode.Regular, Hash: o.blob("y")}))
	deep := o.commit(o.tree(
		object.TreeEntry{Name: "g", Mode: filemode.Regular, Hash: o.blob("y")},
		object.TreeEntry{Name: "catalog", Mode: filemode.Dir, Hash: atLimit}))
	limit := o.commit(atLimit)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := r.Changed(ctx, base, deep); !errors.Is(err, ErrTreeTooDeep) || diag.CategoryOf(err) != diag.Invalid ||
		!strings.Contains(err.Error(), deep.Hash.String()) || !strings.Contains(err.Error(), "catalog/a/a/") {
		t.Errorf("Changed of a tree %d levels deep: %v", MaxTreeDepth+1, err)
	}
	if _, _, err := r.Checkout(ctx, deep); !errors.Is(err, ErrTreeTooDeep) || diag.CategoryOf(err) != diag.Invalid {
		t.Errorf("Checkout of a tree %d levels deep: %v", MaxTreeDepth+1, err)
	}
	if paths, err := r.Changed(ctx, base, limit); err != nil || len(paths) != 2 {
		t.Errorf("Changed of a tree %d levels deep (git's limit): %q %v", MaxTreeDepth, paths, err)
	}
	// Only what differs is walked: the deep directory unchanged on both sides costs nothing to a change.
	beside := o.commit(o.tree(
		object.TreeEntry{Name: "g", Mode: filemode.Regular, Hash: o.blob("z")},
		object.TreeEntry{Name: "catalog", Mode: filemode.Dir, Hash: atLimit}))
	if paths, err := r.Changed(ctx, deep, beside); err != nil || len(paths) != 1 || paths[0] != "g" {
		t.Errorf("Changed beside an unchanged deep directory: %q %v", paths, err)
	}
}
