package gitrepo

import (
	"bytes"
	"container/list"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// fallbackCache is the object cache of go-git's own storage, which reads only what objectStore does not
// find (objects of alternates).
const fallbackCache = 1 << 20

// storage is go-git's storage of a repository with its objects read through objectStore: go-git's
// commits, trees and blobs (Resolve, TreeFS, ReadFile, Changed, Merge, Checkout) stream a blob from its
// pack to the reader instead of inflating it and keeping it. Writing (Merge's objects) is go-git's.
type storage struct {
	*filesystem.Storage
	objects *objectStore
}

// streaming reopens a repository go-git opened from disk over storage; other repositories stay as
// they are.
func streaming(r *git.Repository) (*git.Repository, error) {
	fsst, ok := r.Storer.(*filesystem.Storage)
	if !ok {
		return r, nil
	}
	fs := fsst.Filesystem()
	st := &storage{
		Storage: filesystem.NewStorageWithOptions(fs, cache.NewObjectLRU(fallbackCache), filesystem.Options{}),
		objects: newObjectStore(fs),
	}
	var wt billy.Filesystem
	if w, err := r.Worktree(); err == nil {
		wt = w.Filesystem
	}
	return git.Open(st, wt)
}

// EncodedObject is object h (of type t, or any with plumbing.AnyObject): a blob as a handle that streams
// its content when read, any other object in memory.
func (s *storage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.objects.object(t, h)
	if errors.Is(err, errNotHere) {
		return s.Storage.EncodedObject(t, h)
	}
	if err != nil && !errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("object %s: %w", h, err)
	}
	return obj, err
}

// object reads object h of type t (plumbing.ErrObjectNotFound when it is of another type).
func (o *objectStore) object(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	rd := o.reading()
	defer rd.close()
	typ, size, loc, err := rd.info(h)
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && typ != t {
		return nil, plumbing.ErrObjectNotFound
	}
	if typ == plumbing.BlobObject {
		return &streamedBlob{o: o, h: h, size: size}, nil
	}
	var data []byte
	if loc.pk < 0 {
		_, data, err = o.looseAll(h)
	} else {
		_, data, err = rd.materialise(h, loc)
	}
	if err != nil {
		return nil, err
	}
	obj := &plumbing.MemoryObject{}
	obj.SetType(typ)
	if _, err := obj.Write(data); err != nil {
		return nil, err
	}
	return obj, nil
}

// open streams blob h's content: a whole object from its pack or loose file, a delta resolved in memory.
func (o *objectStore) open(h plumbing.Hash, size int64) (io.ReadCloser, error) {
	loc, err := o.locate(h)
	if err != nil {
		return nil, err
	}
	if loc.pk < 0 {
		r, _, _, err := o.looseReader(h)
		return r, err
	}
	rd := o.reading()
	hd, s, err := rd.header(loc.pk, loc.offset)
	if err != nil {
		rd.close()
		return nil, err
	}
	if !hd.Type.IsDelta() {
		r, err := s.ReadObject()
		if err != nil {
			rd.close()
			return nil, err
		}
		return &closers{Reader: &exactReader{r: r, left: size}, close: []io.Closer{r, closeFunc(rd.close)}}, nil
	}
	_, data, err := rd.materialise(h, loc)
	rd.close()
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

type closeFunc func()

func (f closeFunc) Close() error { f(); return nil }

// exactReader reads exactly left bytes: a stream that ends sooner is an error, not a shorter file.
type exactReader struct {
	r    io.Reader
	left int64
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.left {
		p = p[:e.left]
	}
	n, err := e.r.Read(p)
	e.left -= int64(n)
	if errors.Is(err, io.EOF) && e.left > 0 {
		return n, io.ErrUnexpectedEOF
	}
	if e.left == 0 {
		err = io.EOF
	}
	return n, err
}

// streamedBlob is a blob whose content is read from the repository each time its Reader is asked for.
type streamedBlob struct {
	o    *objectStore
	h    plumbing.Hash
	size int64
}

func (b *streamedBlob) Hash() plumbing.Hash            { return b.h }
func (b *streamedBlob) Type() plumbing.ObjectType      { return plumbing.BlobObject }
func (b *streamedBlob) SetType(plumbing.ObjectType)    {}
func (b *streamedBlob) Size() int64                    { return b.size }
func (b *streamedBlob) SetSize(int64)                  {}
func (b *streamedBlob) Reader() (io.ReadCloser, error) { return b.o.open(b.h, b.size) }
func (b *streamedBlob) Writer() (io.WriteCloser, error) {
	return nil, fmt.Errorf("blob %s: read only", b.h)
}

// cached is an object held in the base cache.
type cached struct {
	t    plumbing.ObjectType
	data []byte
}

// baseCache keeps the most recently used bases of deltas, up to max bytes in all.
type baseCache struct {
	mu        sync.Mutex
	max, size int64
	order     *list.List // of cacheEntry, most recent first
	at        map[location]*list.Element
}

type cacheEntry struct {
	loc location
	cached
}

func newBaseCache(max int64) *baseCache {
	return &baseCache{max: max, order: list.New(), at: map[location]*list.Element{}}
}

func (c *baseCache) get(loc location) (cached, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.at[loc]
	if !ok {
		return cached{}, false
	}
	c.order.MoveToFront(e)
	return e.Value.(cacheEntry).cached, true
}

func (c *baseCache) put(loc location, t plumbing.ObjectType, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if int64(len(data)) > c.max {
		return
	}
	if e, ok := c.at[loc]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.at[loc] = c.order.PushFront(cacheEntry{loc, cached{t, data}})
	c.size += int64(len(data))
	for c.size > c.max {
		e := c.order.Back()
		old := e.Value.(cacheEntry)
		c.order.Remove(e)
		delete(c.at, old.loc)
		c.size -= int64(len(old.data))
	}
}
