package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// validateScope is what one validate run checks, resolved once: catalogs under root, and the
// configuration governing them (nil: the defaults). A catalog directory is a scope of one unnamed
// catalog ({Dir: "."}); a template-driven repository's scope is its layout's catalogs.
type validateScope struct {
	root     string
	catalogs []config.Catalog
	cfg      *config.Config
	layout   *pipeline.Layout // the template-driven repository's layout; nil for a catalog directory
	named    bool             // the catalogs are a layout's, named in the report (layout, or init's proof)
}

// resolveValidateScope resolves what validate checks: DIR (or, without it, the repository's top for
// --changed-since and --staged, else the working directory) when its .catalogbot.yaml lists catalogs;
// else the catalog directory DIR or the repository's catalog.dir, under the nearest configuration.
func resolveValidateScope(ctx context.Context, o *validateOptions) (*validateScope, error) {
	root := cmp.Or(o.dir, ".")
	if o.dir == "" && (o.changedSince != "" || o.staged) {
		// a pre-commit hook runs at the repository's top, but a hook's verdict must not depend on that
		if top, err := gitrepo.TopLevel(ctx, "."); err == nil {
			root = top
		}
	}
	setup, err := resolveRepo(root)
	if err != nil {
		return nil, err
	}
	if setup.layout.Templates {
		return &validateScope{root: root, catalogs: setup.layout.Catalogs, cfg: setup.cfg, layout: setup.layout, named: true}, nil
	}
	if err := templateLayoutWithoutCatalogs(root); err != nil {
		return nil, err
	}
	dir, err := setup.catalogDir(ctx, o.dir)
	if err != nil {
		return nil, err
	}
	cfg, err := setup.configFor(dir)
	if err != nil {
		return nil, err
	}
	return &validateScope{root: dir, catalogs: []config.Catalog{{Dir: "."}}, cfg: cfg}, nil
}

// dirOf is catalog c's directory.
func (sc *validateScope) dirOf(c config.Catalog) string {
	return filepath.Join(sc.root, filepath.FromSlash(c.Dir))
}

// catalogOf is the catalog holding p (a slash path relative to root) and p relative to it: a catalog
// directory holds every path under it.
func (sc *validateScope) catalogOf(p string) (config.Catalog, string, bool) {
	if sc.layout == nil {
		return sc.catalogs[0], p, true
	}
	return sc.layout.CatalogOf(p)
}

// The number of catalogs changes only the wording of a validate run's report, in the functions below: a
// template-driven repository's catalogs are named (in the title, each stage, a progress line per catalog
// and errors); a catalog directory's report is that of a single catalog.

// title is the report's title.
func (sc *validateScope) title(changed bool) string {
	switch {
	case !sc.named:
		return "catalog " + sc.root
	case changed:
		return fmt.Sprintf("the changed catalogs of %s", sc.root)
	}
	return fmt.Sprintf("%d catalogs of %s", len(sc.catalogs), sc.root)
}

// progress writes a named catalog's progress line to w: the catalog's place among total when known
// (total > 0).
func (sc *validateScope) progress(w io.Writer, done, total int, cr validate.CatalogResult) {
	if !sc.named {
		return
	}
	counter := ""
	if total > 0 {
		counter = fmt.Sprintf(" [%d/%d]", done, total)
	}
	fmt.Fprintf(w, "validate%s %s: %s (%s)\n", counter, cr.Name, sc.stage(cr, "").Status, cr.Duration.Round(time.Millisecond))
}

// catalogErr is err of doing what (validating, say) to catalog c.
func (sc *validateScope) catalogErr(what string, c config.Catalog, err error) error {
	if !sc.named {
		return err
	}
	return fmt.Errorf("%s catalog %s: %w", what, c.Name, err)
}

// changedScope is what a summary adds for validate.Changed's selection of files changed.
func changedScope(named bool, files int, fellBack bool) string {
	s := fmt.Sprintf(" (%d changed files", files)
	if named {
		s = fmt.Sprintf(" (%s changed", template.Plural(files, "file"))
	}
	if fellBack {
		s += "; whole catalog validated"
	}
	return s + ")"
}

// stage is one catalog's validation as a report stage; scope ends its summary.
func (sc *validateScope) stage(cr validate.CatalogResult, scope string) report.Stage {
	st := report.Stage{Name: validate.Check, Duration: cr.Duration}
	name := ""
	if sc.named {
		st.Name, name = validate.Check+" "+cr.Name, cr.Name+": "
	}
	if cr.Err != nil {
		st.Status, st.Err = report.StatusOf(nil, cr.Err), cr.Err.Error()
		return st
	}
	st.Status, st.Diagnostics, st.Truncated, st.Summary = report.StatusOf(cr.Diagnostics, nil), cr.Diagnostics, cr.Truncated, name+cr.Summary()+scope
	return st
}
