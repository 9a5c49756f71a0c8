package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/diag"
	"github.com/catalogbot/catalogbot/pipeline/owners"
	"github.com/catalogbot/catalogbot/pipeline/report"
	"github.com/catalogbot/catalogbot/render"
)

// RenderInput is a checked-out revision whose catalog is rendered from a references config.
type RenderInput struct {
	// Tree is the checkout's root; RefsFile and CatalogDir are slash paths relative to it.
	Tree, RefsFile, CatalogDir string
	// Format is the catalog's file format (json or yaml).
	Format        string
	RemoteOptions []remote.Option
}

// Rendered is the result of RenderCatalog.
type Rendered struct {
	// Stage is the render stage: pass when the committed catalog is what the references config renders.
	Stage report.Stage
	// Dir, when the committed catalog differs but rendering succeeded, holds the rendered catalog (what
	// CatalogDir should be); Cleanup removes it.
	Dir     string
	Cleanup func()
}

// RenderCatalog renders the references config of a revision and compares the result, byte for byte,
// with its committed catalog, the way the pull request check's render stage does.
func RenderCatalog(ctx context.Context, in RenderInput) Rendered {
	out := Rendered{Cleanup: func() {}}
	fail := func(err error) Rendered {
		out.Stage = stageFromErr(err)
		out.Stage.Name = "render"
		return out
	}
	data, err := os.ReadFile(filepath.Join(in.Tree, filepath.FromSlash(in.RefsFile)))
	if err != nil {
		return fail(fmt.Errorf("references config %s: %w", in.RefsFile, err))
	}
	cfg, ds := render.ParseConfig(data, in.RefsFile)
	if diag.HasErrors(ds) {
		out.Stage = stageFromDiags("references config "+in.RefsFile+" is invalid", ds)
		out.Stage.Name = "render"
		return out
	}
	if want := path.Base(in.CatalogDir); cfg.Name != want {
		return fail(diag.UsageError(fmt.Errorf("%s: name %q must be %q, the name of the catalog directory (catalog.dir in %s)",
			in.RefsFile, cfg.Name, want, owners.ConfigFile)))
	}
	format := in.Format
	if format == "" {
		format = "json"
	}
	rendered, ds, err := render.Render(ctx, cfg, render.Options{BaseDir: filepath.Join(in.Tree, filepath.FromSlash(path.Dir(in.RefsFile))),
		RemoteOptions: in.RemoteOptions, Format: format})
	if err != nil {
		out.Stage = stageFromDiags("rendering "+in.RefsFile+" failed", ds)
		if len(ds) == 0 {
			return fail(err)
		}
		out.Stage.Name, out.Stage.Status = "render", report.Error
		return out
	}
	tmp, err := os.MkdirTemp("", "catalogbot-rendered-")
	if err != nil {
		return fail(err)
	}
	cleanup := func() { os.RemoveAll(tmp) }
	if err := rendered.Write(tmp, format); err != nil {
		cleanup()
		return fail(fmt.Errorf("write the rendered catalog: %w", err))
	}
	ds, err = render.CompareTrees(filepath.Join(in.Tree, filepath.FromSlash(in.CatalogDir)), filepath.Join(tmp, cfg.Name))
	if err != nil {
		cleanup()
		return fail(err)
	}
	for i := range ds {
		if ds[i].File != "" {
			ds[i].File = path.Join(path.Dir(in.CatalogDir), ds[i].File) // the diagnostics name <name>/<file>
		}
	}
	out.Stage = stageFromDiags(fmt.Sprintf("%s rendered from %s and compared with %s", plural(len(cfg.References), "reference"),
		in.RefsFile, in.CatalogDir), ds)
	out.Stage.Name = "render"
	if out.Stage.Status == report.Pass {
		cleanup()
		return out
	}
	out.Dir, out.Cleanup = filepath.Join(tmp, cfg.Name), cleanup
	return out
}

// RenderSources are the repository paths a references config's render reads from the repository: the
// file itself and the directories of its local references (slash paths relative to the root; absolute or
// escaping references are left out). A config that does not parse yields just the file.
func RenderSources(refsFile string, data []byte) []string {
	out := []string{refsFile}
	cfg, ds := render.ParseConfig(data, refsFile)
	if cfg == nil || diag.HasErrors(ds) {
		return out
	}
	for _, dir := range cfg.LocalDirs() {
		if path.IsAbs(dir) {
			continue
		}
		p := path.Join(path.Dir(refsFile), dir)
		if p == ".." || strings.HasPrefix(p, "../") {
			continue
		}
		out = append(out, p)
	}
	return out
}

// Touches tells whether a changed path is one of sources or under one of them.
func Touches(changed, sources []string) bool {
	for _, c := range changed {
		for _, s := range sources {
			if c == s || s == "." || strings.HasPrefix(c, s+"/") {
				return true
			}
		}
	}
	return false
}
