package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// What a change touches in the repository's layout, the template drift gate (the render stage's part for
// template mappings) and the validate stage, which validates every catalog holding a touched package.

// affected is what a change touches in the repository's layout (a single-catalog repository is a layout
// of one catalog).
type affected struct {
	catalogs []config.Catalog // every catalog of the layout, in version order
	packages []string         // touched packages, sorted
	jobs     []template.Job   // their template mappings into the layout's catalogs
	planDs   []diag.Diagnostic
	dirs     []config.Catalog // catalogs holding a touched package or path, in version order
}

// affectedCatalogs is what the change touches in the layout resolved once for the run (s.layout, from
// the base and head commits: a catalog a change adds or removes is in it): the packages its files belong
// to (Layout.Attribute, by blob identity), their template mappings, and the catalogs holding one of them.
func (s *state) affectedCatalogs(ctx context.Context) (*affected, error) {
	if s.affected != nil {
		return s.affected, nil
	}
	l := s.layout
	at, err := s.attribution(ctx)
	if err != nil {
		return nil, err
	}
	a := &affected{catalogs: l.Catalogs, packages: slices.Sorted(maps.Keys(at.Packages))}
	hit := map[string]bool{}
	for _, p := range s.changes.paths {
		if c, _, ok := l.CatalogOf(p); ok {
			hit[c.Name] = true
		}
	}
	if l.Templates {
		tcats := template.CatalogsOf(l.Catalogs)
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
	}
	for _, j := range a.jobs {
		hit[j.Catalog.Name] = true
	}
	if len(l.Catalogs) == 1 {
		hit[l.Catalogs[0].Name] = true // a repository of one catalog: every change is checked against it
	}
	for _, c := range l.Catalogs {
		if hit[c.Name] {
			a.dirs = append(a.dirs, c)
			continue
		}
		for _, p := range a.packages {
			if fi, err := os.Stat(filepath.Join(s.headDir, filepath.FromSlash(c.Dir), s.cfg.Catalogs.PackageDir(p))); err == nil && fi.IsDir() {
				a.dirs = append(a.dirs, c)
				break
			}
		}
	}
	s.affected = a
	return a, nil
}

// attribution is the change's files by package under the run's layout (Layout.Attribute), computed once.
func (s *state) attribution(ctx context.Context) (*Attribution, error) {
	if s.attributed == nil {
		at, err := s.layout.Attribute(ctx, s.in.Repo, s.base, s.head, s.changes.paths)
		if err != nil {
			return nil, err
		}
		s.attributed = at
	}
	return s.attributed, nil
}

// renderTemplates is the drift gate: every mapping of a touched package is rendered at the head, with
// the bundle cache seeded from the base revision's committed catalogs (never the change's own), and
// every committed head catalog file that differs from its render fails with a diff.
func (s *state) renderTemplates(ctx context.Context, a *affected) report.Stage {
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
	results := template.RenderJobs(ctx, s.headDir, a.jobs, &template.Images{Store: store, Pull: pull, SeededTags: true}, 0, true, s.stageWriter("render"))
	s.rendered = results
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
		want[s.cfg.Catalogs.PackageDir(p)] = true // the package's directory in each catalog
	}
	include := func(p string) bool {
		for _, c := range a.catalogs {
			if rest, ok := strings.CutPrefix(p, path.Clean(c.Dir)+"/"); ok {
				pkg, _, _ := strings.Cut(rest, "/")
				return want[pkg] || path.Base(p) == catalog.IndexIgnore
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

// validate validates every catalog holding a touched package or path (ValidateTree), in one stage
// (validateStage).
func (s *state) validate(ctx context.Context) report.Stage {
	a, err := s.affectedCatalogs(ctx)
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
	results, err := ValidateTree(ctx, Tree{Root: s.headDir, Catalogs: dirs, Limits: s.limits()})
	if err != nil { // no policy: no error
		return stageFromErr(err)
	}
	if s.cfg.Policy.Enabled() {
		s.validated = map[string]*catalog.Catalog{}
		for _, r := range results {
			if r.Err == nil && r.Result != nil && r.Catalog != nil {
				s.validated[path.Clean(r.Dir)] = r.Catalog
			}
		}
	}
	return validateStage(a, results)
}
