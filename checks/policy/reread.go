package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/catalogbot/catalogbot/catalog"
)

// Reread reads files of a catalog again, with their property values: the paths are those its bundles'
// positions name (catalog.Pos.File, relative to where the catalog loaded from).
type Reread func(ctx context.Context, files []string) (*catalog.Catalog, error)

// rereader gives operator-framework's validators the manifests of the bundles a Collector did not keep
// (only their digest): each file is read again once, when the first of its bundles misses the cache, and
// a bundle's manifests are used only when they are the ones the load hashed.
type rereader struct {
	read  Reread
	mu    sync.Mutex
	files map[string]*rereadFile
}

type rereadFile struct {
	once    sync.Once
	bundles map[[2]string]*catalog.Bundle // by package and name
	err     error
}

// rereadError is a bundle the validators could not read again as the load read it: an error of the run
// (the files changed or could not be read during the check), not a finding a disabled rule could drop.
type rereadError struct{ err error }

func (e *rereadError) Error() string { return e.err.Error() }
func (e *rereadError) Unwrap() error { return e.err }

func isRereadError(err error) bool {
	var re *rereadError
	return errors.As(err, &re)
}

func newRereader(read Reread) *rereader {
	return &rereader{read: read, files: map[string]*rereadFile{}}
}

// manifests returns the manifests of b, whose load hashed them to digest, as its file holds them now. Run
// refuses collected content without Input.Reread, so read is set whenever a Collector dropped manifests.
func (rr *rereader) manifests(ctx context.Context, b *catalog.Bundle, digest [32]byte) ([][]byte, error) {
	file := b.Pos.File
	rr.mu.Lock()
	f := rr.files[file]
	if f == nil {
		f = &rereadFile{}
		rr.files[file] = f
	}
	rr.mu.Unlock()
	f.once.Do(func() {
		c, err := rr.read(ctx, []string{file})
		if err != nil {
			f.err = &rereadError{fmt.Errorf("reading %s again: %w", file, err)}
			return
		}
		f.bundles = map[[2]string]*catalog.Bundle{}
		for _, x := range c.Bundles {
			f.bundles[[2]string{x.Package, x.Name}] = x
		}
	})
	if f.err != nil {
		return nil, f.err
	}
	again := f.bundles[[2]string{b.Package, b.Name}]
	if again == nil {
		return nil, &rereadError{fmt.Errorf("it is no longer in %s", file)}
	}
	// read as the load's were (decodeContent): the same manifests give the same digest
	c := decodeContent(again, decodeWhat{manifests: true}, nil, true)
	if c.digest != digest {
		return nil, &rereadError{fmt.Errorf("its objects in %s changed while the catalog was checked", file)}
	}
	return c.manifests, nil
}
