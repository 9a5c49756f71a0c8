package gitrepo

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// packEntry is one object of a crafted pack: a whole blob, or a delta on the object of another entry
// (ofs: by its index, earlier in the pack) or on a hash (ref).
type packEntry struct {
	name  plumbing.Hash
	blob  []byte
	delta []byte
	ofs   int // -1: not an offset delta
	ref   plumbing.Hash
	size  int  // the size the header declares (0: the content's)
	tree  bool // blob holds a tree object
}

// craftedRepo writes entries as the one pack of a new repository, as no git would write it.
func craftedRepo(t *testing.T, entries []packEntry) *Repo {
	t.Helper()
	dir := t.TempDir()
	if _, err := git.PlainInit(dir, false); err != nil {
		t.Fatal(err)
	}
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(len(entries)))
	idx := new(idxfile.Writer)
	idx.OnHeader(uint32(len(entries)))
	offsets := make([]int64, len(entries))
	z := zlib.NewWriter(nil)
	for i, e := range entries {
		offsets[i] = int64(pack.Len())
		typ, data := plumbing.BlobObject, e.blob
		if e.tree {
			typ = plumbing.TreeObject
		}
		if e.delta != nil {
			typ, data = plumbing.REFDeltaObject, e.delta
			if e.ofs >= 0 {
				typ = plumbing.OFSDeltaObject
			}
		}
		start := pack.Len()
		size := len(data)
		if e.size > 0 {
			size = e.size
		}
		b := byte(typ)<<4 | byte(size&0xf)
		for size >>= 4; size > 0; size >>= 7 {
			pack.WriteByte(b | 0x80)
			b = byte(size & 0x7f)
		}
		pack.WriteByte(b)
		switch typ {
		case plumbing.OFSDeltaObject:
			n := offsets[i] - offsets[e.ofs]
			enc := []byte{byte(n & 0x7f)}
			for n >>= 7; n > 0; n >>= 7 {
				n--
				enc = append([]byte{0x80 | byte(n&0x7f)}, enc...)
			}
			pack.Write(enc)
		case plumbing.REFDeltaObject:
			pack.Write(e.ref[:])
		}
		z.Reset(&pack)
		z.Write(data)
		z.Close()
		idx.OnInflatedObjectHeader(typ, int64(size), offsets[i])
		idx.OnInflatedObjectContent(e.name, offsets[i], crc32.ChecksumIEEE(pack.Bytes()[start:]), nil)
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	idx.OnFooter(plumbing.Hash(sum))
	mi, err := idx.Index()
	if err != nil {
		t.Fatal(err)
	}
	var idxData bytes.Buffer
	if _, err := idxfile.NewEncoder(&idxData).Encode(mi); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, ".git", "objects", "pack", fmt.Sprintf("pack-%x", sum))
	if err := os.WriteFile(base+".pack", pack.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(base+".idx", idxData.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fakeHash(i int) plumbing.Hash { return plumbing.Hash(sha1.Sum([]byte(fmt.Sprint(i)))) }

// readObject reads object h through the repository's storage, within a deadline (a loop would hang).
func readObject(t *testing.T, r *Repo, h plumbing.Hash) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		obj, err := r.r.Storer.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			done <- result{err: err}
			return
		}
		rd, err := obj.Reader()
		if err != nil {
			done <- result{err: err}
			return
		}
		defer rd.Close()
		var b bytes.Buffer
		_, err = b.ReadFrom(rd)
		done <- result{b.Bytes(), err}
	}()
	select {
	case res := <-done:
		return res.data, res.err
	case <-time.After(30 * time.Second):
		t.Fatalf("reading %s did not end", h)
		return nil, nil
	}
}

// Two deltas on each other (each names the other as its base) are refused, not followed for ever.
func TestCraftedDeltaCycleIsRefused(t *testing.T) {
	a, b := fakeHash(1), fakeHash(2)
	delta := []byte{1, 1, 1, 'x'} // base of 1 byte, result of 1 byte: insert "x"
	r := craftedRepo(t, []packEntry{
		{name: a, delta: delta, ofs: -1, ref: b},
		{name: b, delta: delta, ofs: -1, ref: a},
	})
	if _, err := readObject(t, r, a); err == nil || !strings.Contains(err.Error(), "chain of more than") {
		t.Fatalf("reading a delta cycle: %v, want the chain refused", err)
	}
}

// A chain of deltas as long as git writes reads; a longer one is refused.
func TestCraftedDeltaChainIsBounded(t *testing.T) {
	for _, n := range []int{maxDeltaChain, maxDeltaChain + 2} {
		entries := []packEntry{{name: fakeHash(0), blob: []byte("v"), ofs: -1}}
		for i := 1; i <= n; i++ { // each delta replaces the one byte of its base with its own letter
			entries = append(entries, packEntry{name: fakeHash(i), delta: []byte{1, 1, 1, byte('a' + i%26)}, ofs: i - 1})
		}
		r := craftedRepo(t, entries)
		got, err := readObject(t, r, fakeHash(n))
		switch {
		case n <= maxDeltaChain && (err != nil || string(got) != string(rune('a'+n%26))):
			t.Errorf("a chain of %d deltas: %q, %v", n, got, err)
		case n > maxDeltaChain && (err == nil || !strings.Contains(err.Error(), "chain of more than")):
			t.Errorf("a chain of %d deltas: %q, %v, want it refused", n, got, err)
		}
	}
}

// A delta of a few bytes that declares a huge result is refused before anything is allocated for it.
func TestCraftedDeltaBombIsRefused(t *testing.T) {
	// base of 1 byte; result of 2^40 bytes; then copies of the base's byte
	delta := []byte{1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20}
	for range 1000 {
		delta = append(delta, 0x80|0x10, 1)
	}
	r := craftedRepo(t, []packEntry{
		{name: fakeHash(0), blob: []byte("v"), ofs: -1},
		{name: fakeHash(1), delta: delta, ofs: 0},
	})
	if _, err := readObject(t, r, fakeHash(1)); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("reading a delta declaring 1 TB: %v, want the limit named", err)
	}
}

// An object whose header declares far more than its content holds is refused, having allocated a bounded
// part of what it declared: a tree (read into memory) and a blob (streamed: a short stream is an error,
// not a shorter file).
func TestCraftedSizeLieIsRefused(t *testing.T) {
	r := craftedRepo(t, []packEntry{
		{name: fakeHash(0), blob: []byte("tree"), ofs: -1, size: 200 << 20, tree: true},
		{name: fakeHash(1), blob: []byte("blob"), ofs: -1, size: 200 << 20},
	})
	for _, h := range []plumbing.Hash{fakeHash(0), fakeHash(1)} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := readObject(t, r, h)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: an object declaring 200 MB and holding 4 bytes read", h)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("%s: refusing it allocated %d MB", h, alloc>>20)
		}
	}
}
