package gitrepo

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/filetree"
)

// A catalog read from git objects (TreeFS) and from a checkout of the same commit is listed alike: the
// same files loaded and ignored, the same entries refused (a link to an .indexignored file, a dangling
// one, a gitlink as an empty directory, names differing only in case), whatever git stores in a link.
func TestTreeFSListsAsItsCheckout(t *testing.T) {
	o, dir := newObjects(t)
	foo := o.tree(
		object.TreeEntry{Name: ".indexignore", Mode: filemode.Regular, Hash: o.blob("bar.json\n")},
		object.TreeEntry{Name: "Catalog.json", Mode: filemode.Regular, Hash: o.blob(`{"schema":"olm.package","name":"foo"}`)},
		object.TreeEntry{Name: "bar.json", Mode: filemode.Regular, Hash: o.blob(`{"schema":"olm.deprecations","package":"bar"}`)},
		object.TreeEntry{Name: "catalog.json", Mode: filemode.Regular, Hash: o.blob(`{"schema":"olm.package","name":"foo"}`)},
		object.TreeEntry{Name: "notes.json", Mode: filemode.Symlink, Hash: o.blob("bar.json")},
		object.TreeEntry{Name: "run.sh", Mode: filemode.Executable, Hash: o.blob("#!/bin/sh\n")},
	)
	cat := o.tree(
		object.TreeEntry{Name: "foo", Mode: filemode.Dir, Hash: foo},
		object.TreeEntry{Name: "out", Mode: filemode.Symlink, Hash: o.blob("/etc/passwd")},
		object.TreeEntry{Name: "sub", Mode: filemode.Submodule, Hash: plumbing.NewHash(strings.Repeat("ab", 20))},
	)
	c := o.commit(o.tree(object.TreeEntry{Name: "catalog", Mode: filemode.Dir, Hash: cat}))
	repo, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := repo.TreeFS(c, "catalog", func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	fromGit, err := filetree.ListCatalog(fsys)
	if err != nil {
		t.Fatal(err)
	}
	out, cleanup, err := repo.Checkout(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	root, err := os.OpenRoot(out + "/catalog")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fromCheckout, err := filetree.ListCatalog(root.FS())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromGit, fromCheckout) {
		t.Fatalf("git objects and their checkout listed differently:\ngit      %+v\ncheckout %+v", fromGit, fromCheckout)
	}
	var refused []string
	for _, r := range fromGit.Refused {
		refused = append(refused, r.String())
	}
	want := []string{
		"foo/catalog.json differs from foo/Catalog.json only in case or Unicode form: a checkout on a case-insensitive or normalising file system keeps one of the two",
		`foo/notes.json is a symbolic link (to "bar.json")`,
		`out is a symbolic link (to "/etc/passwd")`,
	}
	if !reflect.DeepEqual(refused, want) {
		t.Errorf("refused\n%q\nwant\n%q", refused, want)
	}
	if want := []string{"foo/Catalog.json", "foo/run.sh"}; !reflect.DeepEqual(fromGit.Loaded, want) {
		t.Errorf("loaded %q, want %q", fromGit.Loaded, want)
	}
	if want := []string{".", "foo", "sub"}; !reflect.DeepEqual(fromGit.Dirs, want) {
		t.Errorf("directories %q, want %q", fromGit.Dirs, want)
	}
}
