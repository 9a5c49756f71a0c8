package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/catalogbot/catalogbot/diag"
)

// MaxTreeDepth is how deep directories may nest in a tree catalogbot reads: git's own bound
// (core.maxTreeDepth's default). A deeper tree is a crafted one: every walk of it (go-git's tree diff,
// a checkout through os.Root) costs the square of its depth, minutes of a worker and gigabytes of
// allocation at 20,000 levels, so it is refused before any such walk.
const MaxTreeDepth = 4096

// ErrTreeTooDeep: a tree nests directories deeper than MaxTreeDepth (an Invalid error: the change's content
// is wrong, retrying does not help).
var ErrTreeTooDeep = errors.New("directories nest deeper than git allows (core.maxTreeDepth)")

// tooDeep is ErrTreeTooDeep naming where, the path cut to its first and last components.
func tooDeep(commit plumbing.Hash, dir string) error {
	if len(dir) > 120 {
		dir = dir[:60] + "..." + dir[len(dir)-60:]
	}
	return diag.InvalidError(fmt.Errorf("tree of %s: %s: %w: more than %d levels", commit, dir, ErrTreeTooDeep, MaxTreeDepth))
}

// boundChangeDepth refuses a change whose differing directories (those a tree diff walks: whose hashes
// differ between a and b) nest deeper than MaxTreeDepth. It reads only the trees that differ, as the diff
// after it does.
func boundChangeDepth(ctx context.Context, st storer.EncodedObjectStorer, commit plumbing.Hash, a, b plumbing.Hash) error {
	type level struct {
		a, b  plumbing.Hash
		dir   string
		depth int
	}
	stack := []level{{a, b, ".", 0}}
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if l.depth > MaxTreeDepth {
			return tooDeep(commit, l.dir)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		dirs := map[string][2]plumbing.Hash{}
		for i, h := range [2]plumbing.Hash{l.a, l.b} {
			if h.IsZero() {
				continue
			}
			t, err := object.GetTree(st, h)
			if err != nil {
				return fmt.Errorf("tree %s: %w", l.dir, err)
			}
			for _, e := range t.Entries {
				if e.Mode == filemode.Dir {
					hs := dirs[e.Name]
					hs[i] = e.Hash
					dirs[e.Name] = hs
				}
			}
		}
		for name, hs := range dirs {
			if hs[0] != hs[1] {
				stack = append(stack, level{hs[0], hs[1], path.Join(l.dir, name), l.depth + 1})
			}
		}
	}
	return nil
}
