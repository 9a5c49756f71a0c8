package gitrepo

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// merge3 merges as git merge-file does where git merges, and conflicts wherever git conflicts (also on
// changes to adjacent lines); checked against git itself when it is installed.
func TestMerge3(t *testing.T) {
	owners := "reviewers:\n  - mallory\n  - alice\n  - bob\n  - carol\n"
	for _, tc := range []struct {
		name    string
		o, a, b string
		want    string // "" with ok false: a conflict
	}{
		{"one side", "a\nb\nc\n", "a\nB\nc\n", "a\nb\nc\n", "a\nB\nc\n"},
		{"apart", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n", "A\nb\nc\nd\nE\n"},
		{"same change", "a\nb\nc\n", "a\nX\nc\n", "a\nX\nc\n", "a\nX\nc\n"},
		{"same line", "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", ""},
		{"adjacent lines", "a\nb\nc\nd\n", "a\nB\nc\nd\n", "a\nb\nC\nd\n", ""},
		{"insert at one place", "a\nb\n", "a\nX\nb\n", "a\nY\nb\n", ""},
		{"no final line feed", "a\nb\nc\nd\ne", "A\nb\nc\nd\ne", "a\nb\nc\nd\nE", "A\nb\nc\nd\nE"},
		// the removed reviewer comes back: the head moves mallory to the end, the tip removes her
		{"owner re-listed", owners, strings.Replace(owners, "  - mallory\n", "", 1), strings.Replace(owners, "  - mallory\n", "", 1) + "  - mallory\n",
			"reviewers:\n  - alice\n  - bob\n  - carol\n  - mallory\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := merge3(tc.o, tc.a, tc.b)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("merge3 = %q, %v; want %q", got, ok, tc.want)
			}
			if _, err := exec.LookPath("git"); err != nil {
				return
			}
			dir := t.TempDir()
			for name, s := range map[string]string{"o": tc.o, "a": tc.a, "b": tc.b} {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.Command("git", "merge-file", "-p", filepath.Join(dir, "a"), filepath.Join(dir, "o"), filepath.Join(dir, "b")).Output()
			if gitOK := err == nil; gitOK != ok || ok && string(out) != got {
				t.Errorf("git merge-file: %q (clean %v), merge3: %q (clean %v)", out, gitOK, got, ok)
			}
		})
	}
}

// Merge builds the merge commit of the head into the tip: deterministic, with the tip and the head as
// parents; what only one side changed is taken from it, a file both changed merges line by line, and
// what does not merge is listed, never guessed.
func TestMerge(t *testing.T) {
	o, _ := newObjects(t)
	repo := &Repo{r: o.r}
	ctx := context.Background()
	base := o.child(nil, map[string]string{"catalog/foo/catalog.json": "a\nb\nc\nd\ne\n", "catalog/bar/catalog.json": "bar\n", "OWNERS": "x\n"})
	tip := o.child(base, map[string]string{"catalog/foo/catalog.json": "A\nb\nc\nd\ne\n", "catalog/bar/catalog.json": "", "main.txt": "m\n"})
	head := o.child(base, map[string]string{"catalog/foo/catalog.json": "a\nb\nc\nd\nE\n", "catalog/baz/catalog.json": "baz\n"})
	m, err := repo.Merge(ctx, tip, head)
	if err != nil || len(m.Conflicts) > 0 {
		t.Fatalf("merge: %v %v", m, err)
	}
	want := map[string]string{"catalog/foo/catalog.json": "A\nb\nc\nd\nE\n", "catalog/baz/catalog.json": "baz\n", "OWNERS": "x\n", "main.txt": "m\n"}
	if got := o.files(m.Commit); !maps.Equal(got, want) {
		t.Errorf("merged tree %v, want %v", got, want)
	}
	if !slices.Equal(m.Commit.ParentHashes, []plumbing.Hash{tip.Hash, head.Hash}) {
		t.Errorf("parents %v", m.Commit.ParentHashes)
	}
	if again, _ := repo.Merge(ctx, tip, head); again.Commit.Hash != m.Commit.Hash {
		t.Errorf("two merges of the same commits: %s and %s", m.Commit.Hash, again.Commit.Hash)
	}
	// both change the same line, and one deletes what the other changes
	clash := o.child(base, map[string]string{"catalog/foo/catalog.json": "X\nb\nc\nd\ne\n", "catalog/bar/catalog.json": "BAR\n"})
	if m, err := repo.Merge(ctx, tip, clash); err != nil || m.Commit != nil || !slices.Equal(m.Conflicts, []string{"catalog/bar/catalog.json", "catalog/foo/catalog.json"}) {
		t.Errorf("conflicting merge: %+v %v", m, err)
	}
	// a head that contains the tip lands its own tree; a tip that contains the head lands the tip's
	updated := o.child(tip, map[string]string{"new.txt": "n\n"})
	for _, tc := range []struct{ tip, head, tree *object.Commit }{{tip, updated, updated}, {updated, tip, updated}} {
		m, err := repo.Merge(ctx, tc.tip, tc.head)
		if err != nil || m.Commit == nil || m.Commit.TreeHash != tc.tree.TreeHash {
			t.Errorf("merge of %s into %s: %+v %v", tc.head.Hash, tc.tip.Hash, m, err)
		}
	}
}

// child commits files (path -> content; "" deletes) on top of parent (nil: a root commit).
func (o *objects) child(parent *object.Commit, files map[string]string) *object.Commit {
	o.t.Helper()
	all := map[string]string{}
	var parents []plumbing.Hash
	when := time.Unix(0, 0)
	if parent != nil {
		all = o.files(parent)
		parents = []plumbing.Hash{parent.Hash}
		when = parent.Committer.When.Add(time.Minute)
	}
	for p, c := range files {
		if c == "" {
			delete(all, p)
		} else {
			all[p] = c
		}
	}
	sig := object.Signature{Name: "t", Email: "t@e", When: when}
	h := o.store(&object.Commit{Author: sig, Committer: sig, Message: "c", TreeHash: o.nested("", all), ParentHashes: parents}, plumbing.CommitObject)
	c, err := o.r.CommitObject(h)
	if err != nil {
		o.t.Fatal(err)
	}
	return c
}

// nested writes the tree of the files under dir.
func (o *objects) nested(dir string, files map[string]string) plumbing.Hash {
	var entries []object.TreeEntry
	subs := map[string]bool{}
	for p, c := range files {
		rel, ok := strings.CutPrefix(p, dir)
		if !ok {
			continue
		}
		if name, _, nestedPath := strings.Cut(rel, "/"); nestedPath {
			if !subs[name] {
				subs[name] = true
				entries = append(entries, object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: o.nested(dir+name+"/", files)})
			}
			continue
		}
		entries = append(entries, object.TreeEntry{Name: rel, Mode: filemode.Regular, Hash: o.blob(c)})
	}
	return o.tree(entries...)
}

// files are the commit's files and their contents.
func (o *objects) files(c *object.Commit) map[string]string {
	o.t.Helper()
	out := map[string]string{}
	tree, err := c.Tree()
	if err != nil {
		o.t.Fatal(err)
	}
	err = tree.Files().ForEach(func(f *object.File) error {
		s, err := f.Contents()
		out[f.Name] = s
		return err
	})
	if err != nil {
		o.t.Fatal(err)
	}
	return out
}
