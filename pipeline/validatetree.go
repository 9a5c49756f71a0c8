package pipeline

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
)

// Tree is what ValidateTree validates: catalogs of the directory tree at Root, whatever the layout (one
// catalog directory, every catalog of a template-driven repository, the catalogs a change affects).
type Tree struct {
	Root     string           // the directory the catalogs' Dir are relative to
	Catalogs []config.Catalog // in the order results are wanted
	Limits   validate.Limits  // bound every catalog's load and diagnostics
	// VisitBundle, when set, sees each bundle as it loads (validate.Options.VisitBundle).
	VisitBundle func(*catalog.Bundle)
	// Sized, when set, is told the total size of the catalogs' files before any of them is loaded (the
	// CLI bounds its memory by it).
	Sized func(bytes int64)
	// Done, when set, is called as each catalog finishes, one call at a time.
	Done func(validate.CatalogResult)
}

// ValidateTree validates every catalog of t, two at a time, and returns one result per catalog in t's
// order; each diagnostic's file is relative to t.Root. It is the one validation of the validate stage of a
// pull request and of `catalogbot validate`.
func ValidateTree(ctx context.Context, t Tree) []validate.CatalogResult {
	dirs := make([]validate.CatalogDir, len(t.Catalogs))
	for i, c := range t.Catalogs {
		dirs[i] = validate.CatalogDir{Name: c.Name, Dir: c.Dir}
	}
	if t.Sized != nil {
		var total int64
		for _, d := range dirs {
			total += treeBytes(filepath.Join(t.Root, filepath.FromSlash(d.Dir)))
		}
		t.Sized(total)
	}
	return validate.Catalogs(ctx, t.Root, dirs, 2, validate.Options{Limits: t.Limits, VisitBundle: t.VisitBundle}, t.Done)
}

// treeBytes is the total size of the regular files under dir (0 for what cannot be read: the load says
// why).
func treeBytes(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				total += info.Size()
			}
		}
		return nil
	})
	return total
}
