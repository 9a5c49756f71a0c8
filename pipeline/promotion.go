package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/promote"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// PromotionOnly reports whether the change is nothing but a promotion of package pkg into catalog (a
// catalog of the layout, by name): it merges, every path it changes is pkg's ci.yaml
// (operators/<dir>/ci.yaml) or a file of pkg's directory in that catalog, and every package those files
// name is pkg (blob identity). Like ReleaseOnly it says nothing about who wrote the change.
func (c *Change) PromotionOnly(pkg, catalog string) bool {
	if !c.onlyPackage(pkg) {
		return false
	}
	cat, ok := c.Layout.catalogNamed(catalog)
	if !ok {
		return false
	}
	dir := c.Rules.Config.Catalogs.PackageDir(pkg)
	ci := path.Join(template.OperatorsDir, dir, template.CIFile)
	for _, p := range c.changes.paths {
		if p != ci && !strings.HasPrefix(p, path.Join(path.Clean(cat.Dir), dir)+"/") {
			return false
		}
	}
	return true
}

// Promotion strategies (fbc.version_promotion_strategy) as the front-ends record them.
const (
	PromoteAlways       = string(promote.Always)
	PromoteReviewNeeded = string(promote.ReviewNeeded)
)

// PromotedAlways reports whether package pkg's ci.yaml, in what the change lands, says
// fbc.version_promotion_strategy: always (a missing, unreadable or other value: false).
func (c *Change) PromotedAlways(pkg string) bool {
	if c == nil || c.Result == nil || c.Rules == nil || c.Rules.Config == nil {
		return false
	}
	ci := path.Join(template.OperatorsDir, c.Rules.Config.Catalogs.PackageDir(pkg), template.CIFile)
	data, ok, err := c.Repo.ReadFile(c.Result, ci)
	if err != nil || !ok {
		return false
	}
	s, _, err := promote.StrategyOf(data)
	return err == nil && s == promote.Always
}

// CatalogsGained are the catalogs the configuration after lists (catalogs.versions, or the names of
// catalogs.list) that before does not, in after's order: the cluster versions a push to the default
// branch added. A before that lists none (no configuration, a pattern whose catalogs are its
// directories, a single catalog) gains nothing: a configuration that starts listing its catalogs adds no
// cluster version.
func CatalogsGained(before, after *config.Config) []string {
	had := listedCatalogs(before)
	if len(had) == 0 {
		return nil
	}
	var out []string
	for _, v := range listedCatalogs(after) {
		if !slices.Contains(had, v) && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func listedCatalogs(c *config.Config) []string {
	if c == nil {
		return nil
	}
	if len(c.Catalogs.List) > 0 {
		var out []string
		for _, e := range c.Catalogs.List {
			out = append(out, e.Name)
		}
		return out
	}
	return c.Catalogs.Versions
}

// PlanPromotion plans the promotion into catalog to of the packages of work (a throw-away checkout of a
// trusted commit, the default branch's) under cfg and layout, as `catalogbot promote --to` does: only
// package dir when dir is not empty (then what would skip it refuses it). It reads ci.yaml files only.
func PlanPromotion(work string, cfg *config.Config, layout *Layout, to, dir string) (*promote.Promotion, error) {
	if !cfg.MultiCatalog() {
		return nil, diag.UsageError(fmt.Errorf("promote: %s lists no catalogs, so there is no catalog to promote into", config.ConfigFile))
	}
	pc := promote.Config{File: config.ConfigFile}
	data, err := os.ReadFile(filepath.Join(work, config.ConfigFile))
	if err == nil {
		pc.Data = data
	}
	return promote.Plan(work, template.CatalogsOf(layout.Catalogs), to, dir, pc)
}

// Promotion is one package's promotion into a new catalog, computed at a commit of the default branch.
type Promotion struct {
	// Package is the plan: its directory, strategy, title and ci.yaml edit.
	Package promote.Package
	// Source is the catalog it was promoted from.
	Source string
	// Files are the edited ci.yaml and the rendered catalog, by repository path.
	Files map[string][]byte
	// Summary says what changed (Markdown).
	Summary string
}

// ComputePromotion promotes the package in directory dir into catalog to at work (a throw-away checkout
// of a trusted commit) under cfg and layout, as `catalogbot promote --to <to> --package <dir>` does: the
// ci.yaml edit and the package's template rendered into the new catalog, the bundles from the committed
// catalogs of work, then their registry. A package the plan refuses (its strategy is never, it maps the
// catalog already, its ci.yaml does not parse) is refused (diag.Invalid, naming the file and line).
func ComputePromotion(ctx context.Context, work string, cfg *config.Config, layout *Layout, to, dir string, remoteOpts []remote.Option) (*Promotion, error) {
	p, err := PlanPromotion(work, cfg, layout, to, dir)
	if err != nil {
		return nil, err
	}
	if ds := diag.Sort(p.Diagnostics); diag.HasErrors(ds) {
		return nil, diag.InvalidError(fmt.Errorf("promotion of %s into %s refused: %s", dir, to, ds[0].String()))
	}
	if len(p.Packages) != 1 {
		return nil, diag.InvalidError(fmt.Errorf("promotion of %s into %s: the plan holds %d packages", dir, to, len(p.Packages)))
	}
	pk := p.Packages[0]
	tcats := template.CatalogsOf(layout.Catalogs)
	store := template.NewStore("")
	if err := template.SeedFromCommitted(ctx, store, work, tcats, p.Jobs()); err != nil {
		return nil, fmt.Errorf("seeding the bundle cache for %s: %w", dir, err)
	}
	pull, err := render.NewBundleImages(render.Options{RemoteOptions: remoteOpts, AllowedRegistries: cfg.Images.AllowedRegistries})
	if err != nil {
		return nil, err
	}
	results := p.Render(ctx, &template.Images{Store: store, Pull: pull, SeededTags: true}, 0, nil)
	if err := template.InfraErr(results); err != nil {
		return nil, err
	}
	out := &Promotion{Package: pk, Source: p.Source.Name, Files: map[string][]byte{pk.CI.File: pk.CI.After}}
	for _, res := range results {
		if res.Err != nil {
			return nil, diag.InvalidError(fmt.Errorf("promotion of %s into %s: rendering %s: %w", dir, to, res.Job.Output(), res.Err))
		}
		out.Files[res.Job.Output()] = res.Data
	}
	out.Summary = fmt.Sprintf("%s promoted from %s into %s (`fbc.%s: %s`): %s maps %s, %s rendered.",
		report.CodeSpan(pk.Name), report.Text(p.Source.Name), report.Text(to), promote.StrategyKey, pk.Strategy,
		report.CodeSpan(pk.CI.File), report.Text(to), report.CodeSpan(pk.Job.Output()))
	return out, nil
}
