package render

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
)

// Write writes the rendered catalog as <dir>/<Name>/<reference>/index.yaml (or index.json), each file as
// `opm render -o yaml|json` writes it, so identical input gives identical bytes.
//
// <dir>/<Name> is replaced as a whole: everything is written into a new directory next to it, synced,
// and renamed into place; the old one is moved aside first and removed after. A failure leaves the old
// directory as it was, and readers never see a half-written catalog.
func (o *Output) Write(dir, format string) error {
	if format != catalog.FormatYAML && format != catalog.FormatJSON {
		return diag.UsageError(fmt.Errorf("write rendered catalog: unknown format %q (want yaml or json)", format))
	}
	if !isDirName(o.Name) {
		return diag.UsageError(fmt.Errorf("write rendered catalog: name %q is not a single directory name", o.Name))
	}
	for _, r := range o.References {
		if !isDirName(r.Reference.Name) {
			return diag.UsageError(fmt.Errorf("write rendered catalog %s: reference name %q is not a single directory name", o.Name, r.Reference.Name))
		}
	}
	target := filepath.Join(dir, o.Name)
	err := filetree.ReplaceDir(target, func(tmp string) error {
		// Encoding YAML is the expensive part: one reference per CPU at a time.
		var g errgroup.Group
		g.SetLimit(runtime.GOMAXPROCS(0))
		for _, r := range o.References {
			g.Go(func() error {
				if err := writeReference(filepath.Join(tmp, r.Reference.Name), r.Catalog, format); err != nil {
					return fmt.Errorf("reference %s: %w", r.Reference.Name, err)
				}
				return nil
			})
		}
		return g.Wait()
	})
	if err != nil {
		return fmt.Errorf("write rendered catalog %s: %w", target, err)
	}
	return nil
}

// isDirName reports whether s is one plain path element on every platform.
func isDirName(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, `/\`) && filepath.IsLocal(s)
}

func writeReference(dir string, c *catalog.Catalog, format string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return filetree.WriteNew(filepath.Join(dir, "index."+format), 0o644, func(w io.Writer) error {
		if format == catalog.FormatJSON {
			return catalog.WriteJSON(w, c)
		}
		return catalog.WriteYAML(w, c)
	})
}
