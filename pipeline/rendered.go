package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/report"
)

// RenderInput is a checked-out revision whose catalog is rendered from a references config.
type RenderInput struct {
	// Tree is the checkout's root; RefsFile and CatalogDir are slash paths relative to it.
	Tree, RefsFile, CatalogDir string
	// Format is the catalog's file format (json or yaml).
	Format        string
	RemoteOptions []remote.Option
	// AllowedRegistries, when set, are the only registries image references are read from.
	AllowedRegistries []string
}

// Rendered is the result of RenderCatalog.
type Rendered struct {
	// Stage is the render stage: pass when the committed catalog is what the references config renders.
	Stage report.Stage
	// Dir, when the committed catalog differs but rendering succeeded, holds the rendered catalog (what
	// CatalogDir should be); Cleanup removes it.
	Dir     string
	Cleanup func()
	// Path, when set, is the repository directory Dir replaces (a template-driven repository's catalogs'
	// parent); otherwise Dir replaces the configured catalog directory.
	Path string
}

// RenderCatalog renders the references config of a checked-out revision and compares the result, byte
// for byte, with its committed catalog: the pull request check's render stage, keeping the render.
func RenderCatalog(ctx context.Context, in RenderInput) Rendered {
	out := Rendered{Cleanup: func() {}}
	tmp, err := os.MkdirTemp("", "catalogbot-rendered-")
	if err != nil {
		out.Stage = stageFromErr(fmt.Errorf("render %s: %w", in.RefsFile, err))
		out.Stage.Name = "render"
		return out
	}
	data, err := os.ReadFile(filepath.Join(in.Tree, filepath.FromSlash(in.RefsFile)))
	rendered := false
	if err != nil {
		out.Stage = stageFromErr(fmt.Errorf("references config %s: %w", in.RefsFile, err))
	} else {
		out.Stage, rendered = renderStage(ctx, in.Tree, in.RefsFile, in.CatalogDir, data,
			render.Options{RemoteOptions: in.RemoteOptions, Format: in.Format, AllowedRegistries: in.AllowedRegistries}, tmp)
	}
	out.Stage.Name = "render"
	if !rendered || out.Stage.Status == report.Pass {
		os.RemoveAll(tmp)
		return out
	}
	out.Dir, out.Cleanup = filepath.Join(tmp, path.Base(in.CatalogDir)), func() { os.RemoveAll(tmp) }
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
