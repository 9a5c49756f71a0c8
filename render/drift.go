package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
)

// maxDiffLines caps the diff shown in one drift diagnostic.
const maxDiffLines = 200

const driftHint = "run catalogbot render and commit the result"

// Drift renders cfg into a temporary directory and compares it byte for byte with the committed
// committedDir/<cfg.Name>. Each differing, missing or extra file is an error diagnostic (rule
// "render-drift") whose message holds a unified diff from the committed file to the rendered one. Render
// failures are returned as Render returns them.
func Drift(ctx context.Context, cfg *Config, committedDir string, opts Options) ([]diag.Diagnostic, error) {
	tmp, err := os.MkdirTemp("", "catalogbot-drift-")
	if err != nil {
		return nil, fmt.Errorf("drift check: %w", err)
	}
	defer os.RemoveAll(tmp)
	return DriftInto(ctx, cfg, committedDir, tmp, opts)
}

// DriftInto is Drift that leaves the rendered catalog in outDir/<cfg.Name> for the caller (to commit it).
func DriftInto(ctx context.Context, cfg *Config, committedDir, outDir string, opts Options) ([]diag.Diagnostic, error) {
	format := opts.Format
	if format == "" {
		format = catalog.FormatYAML
	}
	if format != catalog.FormatYAML && format != catalog.FormatJSON {
		return nil, diag.UsageError(fmt.Errorf("drift check: unknown format %q (want yaml or json)", format))
	}
	out, ds, err := Render(ctx, cfg, opts)
	if err != nil {
		return ds, err
	}
	if err := out.Write(outDir, format); err != nil {
		return nil, fmt.Errorf("drift check: %w", err)
	}
	return compareTrees(filepath.Join(committedDir, cfg.Name), filepath.Join(outDir, cfg.Name), opts.CatalogsDir)
}

// compareTrees compares every file under committed with the file at the same path under rendered. The
// committed tree is read as every reader of a catalog reads it (filetree.ListCatalog): an entry the
// listing refuses (a symbolic link, a special file, a look-alike name) is a diagnostic, not compared.
// Diagnostics name their files under dir; messages name them relative to the committed catalog's parent.
func compareTrees(committed, rendered string, dir diag.Dir) ([]diag.Diagnostic, error) {
	have, err := filetree.Read(committed)
	var refused *filetree.RefusedError
	if errors.As(err, &refused) {
		var ds []diag.Diagnostic
		for _, r := range refused.Refused {
			file := path.Join(filepath.Base(committed), r.Path)
			ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: catalog.RuleRefused, File: dir.File(file),
				Message: file + " " + r.Reason, Hint: r.Hint})
		}
		return ds, nil
	}
	if err != nil {
		return nil, fmt.Errorf("drift check: committed catalog %s: %w", committed, err)
	}
	want, err := filetree.Read(rendered)
	if err != nil {
		return nil, fmt.Errorf("drift check: rendered catalog: %w", err)
	}
	var ds []diag.Diagnostic
	for _, c := range filetree.Diff(have, want) {
		// relative to the directory holding the catalog (<name>/<ref>/index.yaml), never a temp path
		file := path.Join(filepath.Base(committed), c.Path)
		d := diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: "render-drift", File: dir.File(file), Hint: driftHint}
		var msg string
		switch c.Kind {
		case filetree.Added:
			msg = fmt.Sprintf("%s is missing: the references render it", file)
		case filetree.Removed:
			msg = fmt.Sprintf("%s is not rendered from the references", file)
		default:
			msg = fmt.Sprintf("%s differs from what the references render", file)
		}
		diff, line := unifiedDiff("committed/"+c.Path, "rendered/"+c.Path, c.Old, c.New, maxDiffLines)
		if c.Kind != filetree.Added {
			d.Line = max(1, min(line, len(splitLines(c.Old))))
		}
		d.Message = msg + ":\n" + diff
		ds = append(ds, d)
	}
	return diag.Sort(ds), nil
}
