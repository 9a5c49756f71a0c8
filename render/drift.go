package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
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
	return compareTrees(filepath.Join(committedDir, cfg.Name), filepath.Join(outDir, cfg.Name))
}

// compareTrees compares every file under committed with the file at the same path under rendered.
func compareTrees(committed, rendered string) ([]diag.Diagnostic, error) {
	have, err := readTree(committed)
	if err != nil {
		return nil, fmt.Errorf("drift check: committed catalog %s: %w", committed, err)
	}
	want, err := readTree(rendered)
	if err != nil {
		return nil, fmt.Errorf("drift check: rendered catalog: %w", err)
	}
	paths := maps.Clone(have)
	maps.Copy(paths, want)
	var ds []diag.Diagnostic
	for _, rel := range slices.Sorted(maps.Keys(paths)) {
		h, inCommitted := have[rel]
		w, inRendered := want[rel]
		// relative to the directory holding the catalog (<name>/<ref>/index.yaml), never a temp path
		file := filepath.ToSlash(filepath.Join(filepath.Base(committed), rel))
		d := diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: "render-drift", File: file, Hint: driftHint}
		var msg string
		switch {
		case !inCommitted:
			msg = fmt.Sprintf("%s is missing: the references render it", file)
		case !inRendered:
			msg = fmt.Sprintf("%s is not rendered from the references", file)
		case string(h) == string(w):
			continue
		default:
			msg = fmt.Sprintf("%s differs from what the references render", file)
		}
		diff, line := unifiedDiff("committed/"+filepath.ToSlash(rel), "rendered/"+filepath.ToSlash(rel), h, w, maxDiffLines)
		if inCommitted {
			d.Line = max(1, min(line, len(splitLines(h))))
		}
		d.Message = msg + ":\n" + diff
		ds = append(ds, d)
	}
	return diag.Sort(ds), nil
}

// readTree reads every regular file under dir, keyed by its path relative to dir. A missing dir is an
// empty tree; anything but directories and regular files is an error.
func readTree(dir string) (map[string][]byte, error) {
	files := map[string][]byte{}
	root, err := os.OpenRoot(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return files, nil
	}
	if err != nil {
		return nil, err
	}
	defer root.Close()
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file", p)
		}
		data, err := fs.ReadFile(root.FS(), p)
		if err != nil {
			return err
		}
		files[filepath.FromSlash(p)] = data
		return nil
	})
	return files, err
}
