package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// A template-driven repository (catalogs: in the base configuration) replaces the render and validate
// stages: render is the template drift gate over the packages the change touched, validate validates
// every catalog holding one of them.

// multi reports whether the base configuration describes several catalogs.
func (s *state) multi() bool { return s.cfg != nil && s.cfg.MultiCatalog() }

// affected is what a change touches in a template-driven repository.
type affected struct {
	catalogs []config.Catalog // every configured catalog, in version order
	packages []string         // touched packages, sorted
	jobs     []template.Job   // their template mappings into configured catalogs
	planDs   []diag.Diagnostic
	dirs     []config.Catalog // catalogs holding a touched package or path, in version order
}

// affectedCatalogs resolves the catalogs (from the head checkout: a catalog a change adds is validated
// too) and the packages the change touched: a file under operators/<pkg>/ or under <catalog>/<pkg>/.
func (s *state) affectedCatalogs() (*affected, error) {
	if s.multiAffected != nil {
		return s.multiAffected, nil
	}
	cfg := *s.cfg
	if versions, err := s.catalogVersions(); err != nil {
		return nil, err
	} else if versions != nil {
		cfg.Catalogs.Versions = versions
	}
	cats, err := cfg.ResolveCatalogs(s.headDir)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("resolving the catalogs of %s: %w", config.ConfigFile, err))
	}
	a := &affected{catalogs: cats}
	pkgs := map[string]bool{}
	hit := map[string]bool{}
	for _, p := range s.changes.paths {
		if rest, ok := strings.CutPrefix(p, template.OperatorsDir+"/"); ok {
			if pkg, _, nested := strings.Cut(rest, "/"); nested {
				pkgs[pkg] = true
			}
			continue
		}
		for _, c := range cats {
			if rest, ok := strings.CutPrefix(p, path.Clean(c.Dir)+"/"); ok {
				hit[c.Name] = true
				if pkg, _, nested := strings.Cut(rest, "/"); nested {
					pkgs[pkg] = true
				}
			}
		}
	}
	for p := range pkgs {
		a.packages = append(a.packages, p)
	}
	sort.Strings(a.packages)
	tcats := template.CatalogsOf(cats)
	for _, p := range a.packages {
		ci := path.Join(template.OperatorsDir, p, template.CIFile)
		jobs, warnings, err := template.Plan(s.headDir, tcats, p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// no ci.yaml at the head: the package maps no template (a hand-written or removed package)
		case err != nil:
			a.planDs = append(a.planDs, diag.Diagnostic{Severity: diag.Error, Check: template.Check, Rule: "template-mapping",
				File: ci, Package: p, Message: err.Error()})
		default:
			a.jobs = append(a.jobs, jobs...)
			for _, w := range warnings {
				a.planDs = append(a.planDs, diag.Diagnostic{Severity: diag.Warning, Check: template.Check, Rule: "template-unknown-catalog",
					File: ci, Package: p, Message: w})
			}
		}
	}
	for _, j := range a.jobs {
		hit[j.Catalog.Name] = true
	}
	for _, c := range cats {
		if hit[c.Name] {
			a.dirs = append(a.dirs, c)
			continue
		}
		for _, p := range a.packages {
			if fi, err := os.Stat(filepath.Join(s.headDir, filepath.FromSlash(c.Dir), p)); err == nil && fi.IsDir() {
				a.dirs = append(a.dirs, c)
				break
			}
		}
	}
	s.multiAffected = a
	return a, nil
}

// catalogVersions lists, for a catalogs pattern without versions, the catalog directories of the base
// revision and of the head: a change that removes a catalog's directory still has its mappings rendered
// (and reported missing). nil when the configuration lists its versions.
func (s *state) catalogVersions() ([]string, error) {
	cc := s.cfg.Catalogs
	parent, rest, _ := strings.Cut(cc.Pattern, config.VersionPlaceholder)
	if cc.Pattern == "" || len(cc.Versions) > 0 || rest != "" || !strings.HasSuffix(parent, "/") {
		return nil, nil // ResolveCatalogs reports a bad pattern
	}
	parent = path.Clean(parent)
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	tree, err := s.base.Tree()
	if err != nil {
		return nil, fmt.Errorf("tree of %s: %w", short(s.base.Hash.String()), err)
	}
	sub, err := tree.Tree(parent)
	switch {
	case errors.Is(err, object.ErrDirectoryNotFound):
	case err != nil:
		return nil, fmt.Errorf("listing catalogs in %s at %s: %w", parent, short(s.base.Hash.String()), err)
	default:
		for _, e := range sub.Entries {
			if e.Mode == filemode.Dir {
				add(e.Name)
			}
		}
	}
	entries, err := os.ReadDir(filepath.Join(s.headDir, filepath.FromSlash(parent)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("listing catalogs in %s: %w", parent, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			add(e.Name())
		}
	}
	return out, nil
}

// renderTemplates is the drift gate: every mapping of a touched package is rendered at the head, with
// the bundle cache seeded from the base revision's committed catalogs (never the change's own), and
// every committed head catalog file that differs from its render fails with a diff.
func (s *state) renderTemplates(ctx context.Context) report.Stage {
	a, err := s.affectedCatalogs()
	if err != nil {
		return stageFromErr(err)
	}
	if len(a.jobs) == 0 && len(a.planDs) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no template mapping of a touched package"}
	}
	store := template.NewStore("")
	if err := s.seedFromBase(ctx, store, a); err != nil {
		return stageFromErr(err)
	}
	opts := render.Options{RemoteOptions: s.in.RemoteOptions, AllowedRegistries: s.cfg.Images.AllowedRegistries}
	opts.Bundle.CSVMetadata = false
	pull, err := render.NewBundleImages(opts)
	if err != nil {
		return stageFromErr(err)
	}
	results := template.RenderJobs(ctx, s.headDir, a.jobs, &template.Images{Store: store, Pull: pull}, 0, true, s.stageWriter("render"))
	ds := append(append([]diag.Diagnostic(nil), a.planDs...), template.GroupDrift(template.Diagnostics(s.headDir, results, true), template.CatalogsOf(a.catalogs))...)
	seen := map[string]bool{}
	for _, j := range a.jobs {
		seen[j.Catalog.Name] = true
	}
	st := stageFromDiags(fmt.Sprintf("%s of %s rendered into %s (bundle cache seeded with %d bundles from the base's catalogs) and compared with the committed catalogs",
		plural(len(a.jobs), "template mapping"), plural(len(a.packages), "touched package"), plural(len(seen), "catalog"), store.Len()), ds)
	if err := template.InfraErr(results); err != nil {
		st.Status, st.Err = report.StatusOf(ds, err), err.Error()
	}
	return st
}

// seedFromBase seeds store from the committed catalogs of the base revision (a trusted tree, read from
// git, not from the checkout), restricted to the touched packages' directories.
func (s *state) seedFromBase(ctx context.Context, store *template.Store, a *affected) error {
	want := map[string]bool{}
	for _, p := range a.packages {
		want[p] = true
	}
	include := func(p string) bool {
		for _, c := range a.catalogs {
			if rest, ok := strings.CutPrefix(p, path.Clean(c.Dir)+"/"); ok {
				pkg, _, _ := strings.Cut(rest, "/")
				return want[pkg]
			}
		}
		return false
	}
	baseFS, err := s.in.Repo.TreeFS(s.base, "", include)
	if err != nil {
		return err
	}
	if err := template.SeedFromFS(ctx, store, baseFS, template.CatalogsOf(a.catalogs), a.jobs); err != nil {
		return fmt.Errorf("seeding the bundle cache from %s: %w", short(s.base.Hash.String()), err)
	}
	return nil
}

// validateCatalogs validates every catalog holding a touched package or path, two at a time, in one
// stage whose details give each catalog's summary.
func (s *state) validateCatalogs(ctx context.Context) report.Stage {
	a, err := s.affectedCatalogs()
	if err != nil {
		return stageFromErr(err)
	}
	var dirs []config.Catalog
	for _, c := range a.dirs {
		if fi, err := os.Stat(filepath.Join(s.headDir, filepath.FromSlash(c.Dir))); err == nil && fi.IsDir() {
			dirs = append(dirs, c)
		}
	}
	if len(dirs) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no catalog holds a touched package"}
	}
	cats := make([]validate.CatalogDir, len(dirs))
	for i, c := range dirs {
		cats[i] = validate.CatalogDir{Name: c.Name, Dir: c.Dir}
	}
	var ds []diag.Diagnostic
	var errs []error
	var details strings.Builder
	failed := 0
	st := report.Stage{}
	for _, r := range validate.Catalogs(ctx, s.headDir, cats, 2, validate.Options{Limits: s.limits()}, nil) {
		if r.Err != nil {
			errs = append(errs, fmt.Errorf("validating catalog %s: %w", r.Name, r.Err))
			fmt.Fprintf(&details, "- %s: %s\n", report.CodeSpan(r.Dir), report.Text(r.Err.Error()))
			failed++
			continue
		}
		if diag.HasErrors(r.Diagnostics) {
			failed++
		}
		ds = append(ds, r.Diagnostics...)
		st.Truncated = append(st.Truncated, r.Truncated...)
		fmt.Fprintf(&details, "- %s: %s\n", report.CodeSpan(r.Dir), report.Text(r.Summary()))
	}
	joined := errors.Join(errs...)
	st.Status = report.StatusOf(ds, joined)
	if joined != nil {
		st.Err = joined.Error()
	}
	st.Diagnostics = ds
	st.Summary = fmt.Sprintf("%s holding the touched packages validated, %d with errors", plural(len(dirs), "catalog"), failed)
	st.Details = "#### Catalogs\n\n" + details.String()
	return st
}
