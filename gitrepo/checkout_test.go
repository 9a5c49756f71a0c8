package gitrepo

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// objects writes git objects straight into a repository, so a test can build trees git itself would
// never write (hostile entry names).
type objects struct {
	t *testing.T
	r *git.Repository
}

func newObjects(t *testing.T) (*objects, string) {
	t.Helper()
	dir := t.TempDir()
	r, err := git.PlainInit(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return &objects{t: t, r: r}, dir
}

func (o *objects) store(obj interface {
	Encode(plumbing.EncodedObject) error
}, typ plumbing.ObjectType) plumbing.Hash {
	o.t.Helper()
	enc := o.r.Storer.NewEncodedObject()
	enc.SetType(typ)
	if err := obj.Encode(enc); err != nil {
		o.t.Fatal(err)
	}
	h, err := o.r.Storer.SetEncodedObject(enc)
	if err != nil {
		o.t.Fatal(err)
	}
	return h
}

func (o *objects) blob(data string) plumbing.Hash {
	o.t.Helper()
	enc := o.r.Storer.NewEncodedObject()
	enc.SetType(plumbing.BlobObject)
	w, _ := enc.Writer()
	w.Write([]byte(data))
	w.Close()
	h, err := o.r.Storer.SetEncodedObject(enc)
	if err != nil {
		o.t.Fatal(err)
	}
	return h
}

func (o *objects) tree(entries ...object.TreeEntry) plumbing.Hash {
	key := func(e object.TreeEntry) string {
		if e.Mode == filemode.Dir {
			return e.Name + "/"
		}
		return e.Name
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	return o.store(&object.Tree{Entries: entries}, plumbing.TreeObject)
}

func (o *objects) commit(tree plumbing.Hash) *object.Commit {
	o.t.Helper()
	sig := object.Signature{Name: "t", Email: "t@e", When: time.Unix(0, 0)}
	h := o.store(&object.Commit{Author: sig, Committer: sig, Message: "c", TreeHash: tree}, plumbing.CommitObject)
	c, err := o.r.CommitObject(h)
	if err != nil {
		o.t.Fatal(err)
	}
	return c
}

// noGit makes the git executable unreachable for the rest of the test.
func noGit(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
}

// listing is every path under dir with what it is: file content and mode, symlink target, or dir.
func listing(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			got[rel] = "-> " + target
			return err
		case fi.IsDir():
			got[rel] = "dir"
		default:
			data, err := os.ReadFile(p)
			got[rel] = fi.Mode().Perm().String() + " " + string(data)
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A checkout needs no git executable and writes directories, files (executable ones too), symlinks
// (as symlinks, even one pointing outside: the loaders refuse to follow those) and gitlinks (as empty
// directories).
func TestCheckoutWithoutGitExecutable(t *testing.T) {
	noGit(t)
	o, dir := newObjects(t)
	pkg := o.tree(
		object.TreeEntry{Name: "catalog.json", Mode: filemode.Regular, Hash: o.blob(`{"schema":"olm.package"}`)},
		object.TreeEntry{Name: "run.sh", Mode: filemode.Executable, Hash: o.blob("#!/bin/sh\n")},
	)
	cat := o.tree(
		object.TreeEntry{Name: "foo", Mode: filemode.Dir, Hash: pkg},
		object.TreeEntry{Name: "link.json", Mode: filemode.Symlink, Hash: o.blob("foo/catalog.json")},
		object.TreeEntry{Name: "out", Mode: filemode.Symlink, Hash: o.blob("/etc/passwd")},
		object.TreeEntry{Name: "sub", Mode: filemode.Submodule, Hash: plumbing.NewHash(strings.Repeat("ab", 20))},
	)
	c := o.commit(o.tree(object.TreeEntry{Name: "catalog", Mode: filemode.Dir, Hash: cat},
		object.TreeEntry{Name: "README.md", Mode: filemode.Regular, Hash: o.blob("hi")}))
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, cleanup, err := repo.Checkout(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	got := listing(t, out)
	cleanup()
	want := map[string]string{
		"README.md":                "-rw-r--r-- hi",
		"catalog":                  "dir",
		"catalog/foo":              "dir",
		"catalog/foo/catalog.json": `-rw-r--r-- {"schema":"olm.package"}`,
		"catalog/foo/run.sh":       "-rwxr-xr-x #!/bin/sh\n",
		"catalog/link.json":        "-> foo/catalog.json",
		"catalog/out":              "-> /etc/passwd",
		"catalog/sub":              "dir",
	}
	if len(got) != len(want) {
		t.Errorf("checkout holds %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("cleanup left %s", out)
	}
}

// A pull request's tree is hostile: an entry named so that writing it would leave the checkout or write
// into .git (trees git itself never writes, but a pushed object can hold) is refused, and nothing is
// written outside the checkout. A symlink named like a directory that a later entry writes through
// cannot exist in one tree, and symlinks are written last, so no write follows one.
func TestCheckoutRefusesEscapingEntries(t *testing.T) {
	for _, name := range []string{"..", ".", "a/../../escaped", "../escaped", ".git", ".GIT", ""} {
		t.Run(strings.ReplaceAll(name, "/", "|"), func(t *testing.T) {
			o, dir := newObjects(t)
			evil := o.tree(object.TreeEntry{Name: "escaped", Mode: filemode.Regular, Hash: o.blob("pwned")})
			inner := o.tree(
				object.TreeEntry{Name: name, Mode: filemode.Dir, Hash: evil},
				object.TreeEntry{Name: name + "f", Mode: filemode.Regular, Hash: o.blob("pwned")},
			)
			c := o.commit(o.tree(object.TreeEntry{Name: "catalog", Mode: filemode.Dir, Hash: inner}))
			repo, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			out, cleanup, err := repo.Checkout(context.Background(), c)
			if err == nil {
				cleanup()
				t.Fatalf("a tree entry named %q was checked out (into %s)", name, out)
			}
			if !strings.Contains(err.Error(), "tree") {
				t.Errorf("error %q does not name the tree", err)
			}
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("a refused checkout left %v in %s", left, tmp)
			}
		})
	}
}

// A checkout stops when its context is done.
func TestCheckoutStopsWhenCanceled(t *testing.T) {
	o, dir := newObjects(t)
	c := o.commit(o.tree(object.TreeEntry{Name: "a", Mode: filemode.Regular, Hash: o.blob("a")}))
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := repo.Checkout(ctx, c); err == nil {
		t.Fatal("a canceled checkout succeeded")
	}
}

// A checkout of a real catalog repository, packed by git with deltas between the two commits' versions of
// big files, holds exactly the files of each commit.
func TestCheckoutOfPackedCatalogMatchesCommits(t *testing.T) {
	needGit(t)
	src := shareddata.Dir(t, "catalogs", "community-operators-prod-v4.20")
	repo := t.TempDir()
	runGit(t, repo, "init", "-q")
	want := map[string]map[string]string{}
	snapshot := func(label string) {
		runGit(t, repo, "add", "-A")
		runGit(t, repo, "commit", "-qm", label)
		runGit(t, repo, "tag", label)
		want[label] = listing(t, repo)
		delete(want[label], ".git")
		for k := range want[label] {
			if strings.HasPrefix(k, ".git"+string(filepath.Separator)) {
				delete(want[label], k)
			}
		}
	}
	n := 0
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || n >= 60 {
			return err
		}
		n++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		write(t, filepath.Join(repo, "catalog", rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	snapshot("base")
	// Change the middle of every file: git stores the head's versions as deltas against the base's.
	err = filepath.WalkDir(filepath.Join(repo, "catalog"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mid := len(data) / 2
		return os.WriteFile(p, append(append(append([]byte{}, data[:mid]...), " \n"...), data[mid:]...), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	snapshot("head")
	runGit(t, repo, "gc", "-q", "--aggressive")
	r, err := Open(repo)
	if err != nil {
		t.Fatal(err)
	}
	for label, files := range want {
		c, err := r.Resolve(label)
		if err != nil {
			t.Fatal(err)
		}
		out, cleanup, err := r.Checkout(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		got := listing(t, out)
		cleanup()
		if len(got) != len(files) {
			t.Errorf("%s: checkout holds %d entries, the commit %d", label, len(got), len(files))
		}
		for k, v := range files {
			if got[k] != v {
				t.Errorf("%s: %s differs from the commit's (%d bytes, want %d)", label, k, len(got[k]), len(v))
			}
		}
	}
}
