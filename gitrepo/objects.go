package gitrepo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

	"github.com/catalogbot/catalogbot/catalog"
)

// Limits of what objectStore holds in memory. maxObject bounds one object it materialises (a delta's base
// or result, a tree, a commit): the loader's default limit of a file, so what a checkout can write a
// validation can read. maxDeltaChain is the longest chain of deltas it resolves: git pack-objects writes
// none longer than 4095 (its --depth limit), and a longer (or cyclic) one is a crafted pack.
// deltaBaseCache is the memory kept of deltas' bases between reads: on composed-279 as a repository packed
// by git gc --aggressive, `pr` took 0.92 s of user CPU with 8 MiB, 0.63 s with 16, 0.66 with 24 and 0.59
// with 32 (hyperfine, 8 runs each), its private memory growing with the cache.
const (
	maxObject      = catalog.DefaultMaxFileSize
	maxDeltaChain  = 4096
	deltaBaseCache = 16 << 20
)

// errNotHere says an object is in neither the pack files nor the loose objects objectStore reads (an
// alternate's, say): the caller asks go-git's own storage.
var errNotHere = errors.New("object not in the repository's packs or loose objects")

// objectStore reads a repository's objects from its pack files and loose objects without holding them:
// a blob that is stored whole streams from its pack (or loose file) to the reader; a delta is resolved
// against its base, and only the bases of deltas stay, in a cache bounded by size. go-git's own storage
// inflates every object it reads into memory and keeps the last 96 MiB of them, bases or not.
type objectStore struct {
	dot   *dotgit.DotGit
	packs func() ([]*pack, error)
	cache *baseCache
}

// pack is one pack file and its index.
type pack struct {
	id  plumbing.Hash
	idx *idxfile.MemoryIndex
}

func newObjectStore(fs billy.Filesystem) *objectStore {
	o := &objectStore{dot: dotgit.New(fs), cache: newBaseCache(deltaBaseCache)}
	o.packs = sync.OnceValues(o.loadPacks)
	return o
}

func (o *objectStore) loadPacks() ([]*pack, error) {
	ids, err := o.dot.ObjectPacks()
	if err != nil {
		return nil, fmt.Errorf("listing pack files: %w", err)
	}
	var packs []*pack
	for _, id := range ids {
		f, err := o.dot.ObjectPackIdx(id)
		if err != nil {
			return nil, fmt.Errorf("pack index %s: %w", id, err)
		}
		idx := idxfile.NewMemoryIndex()
		err = idxfile.NewDecoder(f).Decode(idx)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("pack index %s: %w", id, err)
		}
		packs = append(packs, &pack{id: id, idx: idx})
	}
	return packs, nil
}

// location is where an object is: at offset in pack number pk, or loose (pk -1).
type location struct {
	pk     int
	offset int64
}

// locate finds object h; errNotHere when neither a pack nor a loose file holds it.
func (o *objectStore) locate(h plumbing.Hash) (location, error) {
	packs, err := o.packs()
	if err != nil {
		return location{}, err
	}
	for i, p := range packs {
		if off, err := p.idx.FindOffset(h); err == nil {
			return location{pk: i, offset: off}, nil
		}
	}
	f, err := o.dot.Object(h)
	if err != nil {
		return location{}, errNotHere
	}
	f.Close()
	return location{pk: -1}, nil
}

// reading is one read of objects: the pack files it opened, each with a scanner, closed at its end.
type reading struct {
	o     *objectStore
	files map[int]billy.File
	scans map[int]*packfile.Scanner
}

func (o *objectStore) reading() *reading {
	return &reading{o: o, files: map[int]billy.File{}, scans: map[int]*packfile.Scanner{}}
}

func (rd *reading) close() {
	for _, f := range rd.files {
		f.Close()
	}
}

// header reads the header of the object at offset in pack pk, leaving the scanner at its content.
func (rd *reading) header(pk int, offset int64) (*packfile.ObjectHeader, *packfile.Scanner, error) {
	s, ok := rd.scans[pk]
	if !ok {
		packs, err := rd.o.packs()
		if err != nil {
			return nil, nil, err
		}
		f, err := rd.o.dot.ObjectPack(packs[pk].id)
		if err != nil {
			return nil, nil, fmt.Errorf("pack %s: %w", packs[pk].id, err)
		}
		rd.files[pk], s = f, packfile.NewScanner(f)
		rd.scans[pk] = s
	}
	h, err := s.SeekObjectHeader(offset)
	if err != nil {
		return nil, nil, fmt.Errorf("object at %d of a pack: %w", offset, err)
	}
	return h, s, nil
}

// inflate reads the content the scanner is at, of the size its header declared (at most maxObject).
func inflate(s *packfile.Scanner, size int64) ([]byte, error) {
	r, err := s.ReadObject()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readSized(r, size)
}

// preallocate bounds what is allocated for an object before its content is read: a header may declare
// a size its content does not have.
const preallocate = 16 << 20

// readSized reads an object's content of the declared size (at most maxObject) from r.
func readSized(r io.Reader, size int64) ([]byte, error) {
	if size > maxObject {
		return nil, fmt.Errorf("an object of %d bytes, more than the %d-byte limit of one object held in memory", size, maxObject)
	}
	if size <= preallocate { // read into exactly its size (bytes.Buffer would grow past it to look for more)
		data := make([]byte, size)
		if n, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("an object of %d bytes where its header says %d: %w", n, size, err)
		}
		return data, nil
	}
	buf := bytes.NewBuffer(make([]byte, 0, preallocate))
	n, err := io.Copy(buf, io.LimitReader(r, size))
	if err != nil {
		return nil, err
	}
	if n != size {
		return nil, fmt.Errorf("an object of %d bytes where its header says %d", n, size)
	}
	return buf.Bytes(), nil
}

// info is an object's type and size, and where it is, read from headers (and a delta's first bytes) only.
func (rd *reading) info(h plumbing.Hash) (plumbing.ObjectType, int64, location, error) {
	loc, err := rd.o.locate(h)
	if err != nil {
		return 0, 0, loc, err
	}
	if loc.pk < 0 {
		t, size, err := rd.o.looseHeader(h)
		return t, size, loc, err
	}
	hd, s, err := rd.header(loc.pk, loc.offset)
	if err != nil {
		return 0, 0, loc, err
	}
	if !hd.Type.IsDelta() {
		return hd.Type, hd.Length, loc, nil
	}
	r, err := s.ReadObject()
	if err != nil {
		return 0, 0, loc, err
	}
	var first [20]byte
	n, _ := io.ReadFull(r, first[:])
	r.Close()
	_, rest, ok := uvarint(first[:n])
	size, _, ok2 := uvarint(rest)
	if !ok || !ok2 {
		return 0, 0, loc, fmt.Errorf("object %s: %w", h, errBadDelta)
	}
	t, err := rd.rootType(loc, hd)
	return t, int64(size), loc, err
}

// rootType is the type of the object at the end of a delta's chain of bases.
func (rd *reading) rootType(loc location, hd *packfile.ObjectHeader) (plumbing.ObjectType, error) {
	for depth := 0; hd.Type.IsDelta(); depth++ {
		if depth > maxDeltaChain {
			return 0, errChainTooLong
		}
		if hd.Type == plumbing.REFDeltaObject {
			base, err := rd.o.locate(hd.Reference)
			if err != nil {
				return 0, fmt.Errorf("base %s: %w", hd.Reference, err)
			}
			if base.pk < 0 {
				t, _, err := rd.o.looseHeader(hd.Reference)
				return t, err
			}
			loc = base
		} else {
			loc.offset = hd.OffsetReference
		}
		var err error
		if hd, _, err = rd.header(loc.pk, loc.offset); err != nil {
			return 0, err
		}
	}
	return hd.Type, nil
}

var errChainTooLong = fmt.Errorf("a chain of more than %d deltas (git writes none that long)", maxDeltaChain)

// materialise reads the whole object at loc (a pack's: loose objects read through looseAll), resolving
// deltas through the base cache; the bases it resolves go into the cache, the object itself does not. It
// walks the chain's headers down to a base, then reads each delta as it applies it: memory holds one base,
// one delta and its result, however long the chain.
func (rd *reading) materialise(h plumbing.Hash, loc location) (plumbing.ObjectType, []byte, error) {
	var chain []location
	var t plumbing.ObjectType
	var data []byte
	for depth := 0; ; depth++ {
		if depth > maxDeltaChain {
			return 0, nil, errChainTooLong
		}
		if c, ok := rd.o.cache.get(loc); ok {
			t, data = c.t, c.data
			break
		}
		hd, s, err := rd.header(loc.pk, loc.offset)
		if err != nil {
			return 0, nil, err
		}
		if !hd.Type.IsDelta() {
			if data, err = inflate(s, hd.Length); err != nil {
				return 0, nil, fmt.Errorf("object %s: %w", h, err)
			}
			t = hd.Type
			if len(chain) > 0 {
				rd.o.cache.put(loc, t, data)
			}
			break
		}
		chain = append(chain, loc)
		if hd.Type == plumbing.OFSDeltaObject {
			loc.offset = hd.OffsetReference
			continue
		}
		base, err := rd.o.locate(hd.Reference)
		if err != nil {
			return 0, nil, fmt.Errorf("base %s of object %s: %w", hd.Reference, h, err)
		}
		if base.pk < 0 {
			if t, data, err = rd.o.looseAll(hd.Reference); err != nil {
				return 0, nil, err
			}
			break
		}
		loc = base
	}
	for i := len(chain) - 1; i >= 0; i-- {
		hd, s, err := rd.header(chain[i].pk, chain[i].offset)
		if err != nil {
			return 0, nil, err
		}
		delta, err := inflate(s, hd.Length)
		if err != nil {
			return 0, nil, fmt.Errorf("object %s: %w", h, err)
		}
		if data, err = patch(data, delta, maxObject); err != nil {
			return 0, nil, fmt.Errorf("object %s: %w", h, err)
		}
		if i > 0 {
			rd.o.cache.put(chain[i], t, data)
		}
	}
	return t, data, nil
}

// looseHeader is a loose object's type and size.
func (o *objectStore) looseHeader(h plumbing.Hash) (plumbing.ObjectType, int64, error) {
	f, err := o.dot.Object(h)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r, err := objfile.NewReader(f)
	if err != nil {
		return 0, 0, fmt.Errorf("loose object %s: %w", h, err)
	}
	defer r.Close()
	t, size, err := r.Header()
	if err != nil {
		return 0, 0, fmt.Errorf("loose object %s: %w", h, err)
	}
	return t, size, nil
}

// looseReader streams a loose object's content.
func (o *objectStore) looseReader(h plumbing.Hash) (io.ReadCloser, plumbing.ObjectType, int64, error) {
	f, err := o.dot.Object(h)
	if err != nil {
		return nil, 0, 0, err
	}
	r, err := objfile.NewReader(f)
	if err != nil {
		f.Close()
		return nil, 0, 0, fmt.Errorf("loose object %s: %w", h, err)
	}
	t, size, err := r.Header()
	if err != nil {
		r.Close()
		f.Close()
		return nil, 0, 0, fmt.Errorf("loose object %s: %w", h, err)
	}
	return &closers{Reader: &exactReader{r: r, left: size}, close: []io.Closer{r, f}}, t, size, nil
}

// looseAll reads a whole loose object (at most maxObject bytes).
func (o *objectStore) looseAll(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	r, t, size, err := o.looseReader(h)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	data, err := readSized(r, size)
	if err != nil {
		return 0, nil, fmt.Errorf("loose object %s: %w", h, err)
	}
	return t, data, nil
}

// closers is a reader closing several things.
type closers struct {
	io.Reader
	close []io.Closer
}

func (c *closers) Close() error {
	var errs []error
	for _, x := range c.close {
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}
