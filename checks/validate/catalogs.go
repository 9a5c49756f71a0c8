package validate

import (
	"context"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// CatalogDir is one catalog of a repository holding several.
type CatalogDir struct {
	Name, Dir string // Dir is slash-separated, relative to the repository root
}

// CatalogResult is the validation of one catalog directory.
type CatalogResult struct {
	CatalogDir
	*Result
	Err      error // the catalog could not be validated (unreadable, over a limit, canceled)
	Duration time.Duration
}

// Catalogs validates catalog directories of the repository at root, at most parallel at once (2 when 0),
// and returns one result per directory in the order given. Each catalog is validated with opts, its
// diagnostics naming files under opts.Dir.Sub(its Dir) (opts.Dir is where root is: the zero Dir when
// root is the repository's top). done, when set, is called as each catalog finishes (from one goroutine
// at a time).
func Catalogs(ctx context.Context, root string, catalogs []CatalogDir, parallel int, opts Options, done func(CatalogResult)) []CatalogResult {
	if parallel <= 0 {
		parallel = 2
	}
	out := make([]CatalogResult, len(catalogs))
	var mu sync.Mutex // done is called by one goroutine at a time
	var g errgroup.Group
	g.SetLimit(parallel)
	for i, c := range catalogs {
		g.Go(func() error {
			start := time.Now()
			o := opts
			o.Dir = opts.Dir.Sub(c.Dir)
			res, err := Dir(ctx, filepath.Join(root, filepath.FromSlash(c.Dir)), o)
			out[i] = CatalogResult{CatalogDir: c, Result: res, Err: err, Duration: time.Since(start)}
			if done != nil {
				mu.Lock()
				done(out[i])
				mu.Unlock()
			}
			return nil
		})
	}
	g.Wait()
	return out
}
