package gitrepo

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT NOT INSTALLED (it packs the repository as people's repositories are packed)")
	}
}

// revisedRepo is a repository of a few files revised in many commits, packed by git with long delta
// chains (within and across files), then one more commit left loose.
func revisedRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	rnd := rand.New(rand.NewPCG(1, 2))
	lines := map[string][]string{}
	for _, f := range []string{"a/catalog.json", "b/catalog.json", "c/catalog.yaml", "d/e/f.txt"} {
		for i := range 400 {
			lines[f] = append(lines[f], fmt.Sprintf("%s line %d %d", f, i, rnd.IntN(1000)))
		}
	}
	commit := func(i int) {
		for f, ls := range lines {
			ls[rnd.IntN(len(ls))] = fmt.Sprintf("revision %d %d", i, rnd.IntN(1000))
			write(t, filepath.Join(dir, f), strings.Join(ls, "\n")+"\n")
		}
		runGit(t, dir, "add", "-A")
		runGit(t, dir, "commit", "-qm", fmt.Sprint("revision ", i))
	}
	for i := range 40 {
		commit(i)
	}
	runGit(t, dir, "gc", "-q", "--aggressive")
	commit(40)
	return dir
}

// Every object of a packed repository (deltas on deltas, across files) and of its loose objects reads
// through objectStore with the type, size and content go-git's own storage reads.
func TestObjectStoreReadsAsGoGit(t *testing.T) {
	needGit(t)
	dir := revisedRepo(t)
	plain, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.r.Storer.(*storage); !ok {
		t.Fatalf("Open read through %T, not the streaming storage", r.r.Storer)
	}
	iter, err := plain.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		t.Fatal(err)
	}
	n, deltas := 0, 0
	err = iter.ForEach(func(want plumbing.EncodedObject) error {
		n++
		got, err := r.r.Storer.EncodedObject(plumbing.AnyObject, want.Hash())
		if err != nil {
			return fmt.Errorf("%s: %w", want.Hash(), err)
		}
		if got.Type() != want.Type() || got.Size() != want.Size() {
			return fmt.Errorf("%s: %s of %d bytes, want %s of %d", want.Hash(), got.Type(), got.Size(), want.Type(), want.Size())
		}
		if _, err := r.r.Storer.EncodedObject(otherType(want.Type()), want.Hash()); err != plumbing.ErrObjectNotFound {
			return fmt.Errorf("%s asked as a %s: %v, want ErrObjectNotFound", want.Hash(), otherType(want.Type()), err)
		}
		if !bytes.Equal(readAll(t, got), readAll(t, want)) {
			return fmt.Errorf("%s: the content differs", want.Hash())
		}
		if _, ok := got.(*streamedBlob); !ok && got.Type() == plumbing.BlobObject {
			return fmt.Errorf("blob %s read as a %T, not streamed", want.Hash(), got)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, ".git", "objects", "pack", "*.idx"))
	out, err := exec.Command("git", append([]string{"-C", dir, "verify-pack", "-v"}, idx...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("verify-pack: %v: %s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 7 && f[1] == "blob" {
			deltas++ // "sha type size packed offset depth base": a delta
		}
	}
	if n < 300 || deltas < 100 {
		t.Fatalf("the repository holds %d objects, %d blobs stored as deltas: not the deep packs the test is about", n, deltas)
	}
}

func otherType(t plumbing.ObjectType) plumbing.ObjectType {
	if t == plumbing.BlobObject {
		return plumbing.TreeObject
	}
	return plumbing.BlobObject
}

func readAll(t *testing.T, o plumbing.EncodedObject) []byte {
	t.Helper()
	rd, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A big blob stored whole streams from the pack into the checkout: the checkout allocates a small part
// of its size (go-git's storage inflated it into memory, and more than once).
func TestCheckoutStreamsABigBlob(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	runGit(t, dir, "init", "-q")
	big := make([]byte, 48<<20)
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := range big {
		big[i] = 'a' + byte(rnd.IntN(26)) // compressible only so far: the pack stays smaller than the blob
	}
	write(t, filepath.Join(dir, "catalog", "big", "catalog.json"), string(big))
	runGit(t, dir, "add", "-A")
	runGit(t, dir, "commit", "-qm", "big")
	runGit(t, dir, "gc", "-q")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := r.Resolve("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, cleanup, err := r.Checkout(context.Background(), c)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if got := listing(t, out)[filepath.Join("catalog", "big", "catalog.json")]; got != "-rw-r--r-- "+string(big) {
		t.Fatalf("the checkout's file holds %d bytes, not the blob's %d", len(got), len(big))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("the checkout of a %d MB blob allocated %d MB: it held the blob in memory", len(big)>>20, alloc>>20)
	}
}

// patch applies what go-git's delta encoder writes as go-git's own PatchDelta does.
func FuzzPatch(f *testing.F) {
	f.Add([]byte("base\nof a file\nwith lines\n"), []byte("base\nof the file\nwith lines\nand one more\n"), false)
	f.Add(bytes.Repeat([]byte("0123456789"), 20000), bytes.Repeat([]byte("0123456789"), 21000), false)
	f.Add([]byte("abc"), []byte("xyz"), true)
	// a copy without size bytes copies 0x10000 bytes (sizes 0x10000 and 0x10000, then the copy)
	f.Add(bytes.Repeat([]byte("x"), 0x10000), []byte{0x80, 0x80, 0x04, 0x80, 0x80, 0x04, 0x80}, true)
	f.Fuzz(func(t *testing.T, base, target []byte, raw bool) {
		if len(base) == 0 {
			return // go-git refuses an empty base; git does not write deltas against one
		}
		delta := target // raw: the target's bytes taken as a (likely broken) delta
		if !raw {
			delta = packfile.DiffDelta(base, target)
		}
		want, werr := packfile.PatchDelta(base, delta)
		got, gerr := patch(base, delta, 1<<30)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("go-git: %v, patch: %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("patch gives %q, go-git %q", got, want)
		}
		if !raw && !bytes.Equal(got, target) {
			t.Fatalf("patch gives %q, want the target %q", got, target)
		}
	})
}

// A delta of a few bytes may declare a result of any size: one over the limit is refused before anything
// is allocated for it.
func TestPatchRefusesAResultOverTheLimit(t *testing.T) {
	base := []byte("a base")
	// base size 6; result size 2^40; then copies of the base's 6 bytes
	delta := []byte{6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}
	for range 100 {
		delta = append(delta, 0x80|0x10, 6)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := patch(base, delta, 1<<20)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("patch of a delta declaring 1 TB: %v, want the limit named", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Errorf("refusing it allocated %d bytes", alloc)
	}
}
