package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// Tree is what ValidateTree validates: catalogs of the directory tree at Root, whatever the layout (one
// catalog directory, every catalog of a template-driven repository, the catalogs a change affects).
type Tree struct {
	Root string // the directory the catalogs' Dir are relative to
	// Dir is where Root is in the repository (the zero Dir: Root is its top); each catalog's diagnostics
	// name their files under Dir.Sub(its Dir).
	Dir      diag.Dir
	Catalogs []config.Catalog // in the order results are wanted
	Limits   validate.Limits  // bound every catalog's load and diagnostics
	// Sized, when set, is told the total size of the catalogs' files as each catalog's are listed, before
	// that catalog is loaded: the running total of the catalogs loading or loaded (two at a time; the CLI
	// bounds its memory by it). Each load sizes its files once (catalog.LoadOptions.Sized).
	Sized func(bytes int64)
	// Done, when set, is called as each catalog's validation finishes, one call at a time.
	Done func(validate.CatalogResult)
	// Policy, when set, runs on each catalog validated, after the validation, reading what its load
	// collected.
	Policy *TreePolicy
}

// TreeResult is one catalog's validation, and its policy stage when the tree's policy enables a rule.
type TreeResult struct {
	validate.CatalogResult
	Policy *report.Stage
}

// ValidateTree validates every catalog of t, two at a time, then runs t's policy on each, and returns one
// result per catalog in t's order; each diagnostic names its file under t.Dir. It is the one validation
// of the validate stage of a pull request, of `catalogbot validate` and of init's proof. An error is the
// policy's, which could not run.
func ValidateTree(ctx context.Context, t Tree) ([]TreeResult, error) {
	dirs := make([]validate.CatalogDir, len(t.Catalogs))
	for i, c := range t.Catalogs {
		dirs[i] = validate.CatalogDir{Name: c.Name, Dir: c.Dir}
	}
	opts := validate.Options{Limits: t.Limits, Dir: t.Dir}
	if t.Sized != nil {
		var mu sync.Mutex
		var total int64
		opts.Sized = func(n int64) {
			mu.Lock()
			defer mu.Unlock()
			total += n
			t.Sized(total)
		}
	}
	if t.Policy != nil {
		opts.VisitBundle = t.Policy.Visitor()
	}
	out := make([]TreeResult, 0, len(t.Catalogs))
	for i, r := range validate.Catalogs(ctx, t.Root, dirs, 2, opts, t.Done) {
		out = append(out, TreeResult{CatalogResult: r})
		if t.Policy == nil || r.Err != nil {
			continue
		}
		c := t.Catalogs[i]
		st, ok, err := t.Policy.Stage(ctx, PolicyTarget{Dir: filepath.Join(t.Root, filepath.FromSlash(c.Dir)), Catalog: c, Result: r.Result,
			Limits: t.Limits, Whole: true, Visited: true})
		switch {
		case err != nil && c.Name != "":
			return nil, fmt.Errorf("policy of catalog %s: %w", c.Name, err)
		case err != nil:
			return nil, err
		case ok:
			out[i].Policy = &st
		}
	}
	return out, nil
}
