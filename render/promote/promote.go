package promote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
)

// Check names the promotion's diagnostics.
const Check = "promote"

// Package is one package's promotion: what a pull request promoting it holds.
type Package struct {
	// Dir is the package's directory under operators/ (upstream's operator name); Name the package it holds.
	Dir, Name string
	Strategy  Strategy
	// ReviewNeeded says a maintainer of the package must review the promotion (strategy review-needed):
	// upstream opens one pull request per package, labelled catalog-promotion/review-needed.
	ReviewNeeded bool
	// Title is upstream's commit and pull request title: "Promote operator <dir> to catalog version 4.Y."
	Title string
	// CI is the ci.yaml edit; CILine the line of the new catalog's name in the edited file.
	CI     Change
	CILine int
	// Job renders the package's template into the new catalog (Job.Output is the file it writes).
	Job template.Job
}

// Files are the repository files the package's promotion changes: its ci.yaml and its catalog file in
// the new catalog.
func (p Package) Files() []string { return []string{p.CI.File, p.Job.Output()} }

// Change is one file edit.
type Change struct {
	File          string
	Before, After []byte
}

// Skip is a package the promotion leaves alone, and why.
type Skip struct {
	Dir, Reason string
}

// Promotion is the promotion of a repository's packages into one new catalog.
type Promotion struct {
	Root string
	// Target is the new catalog; Source the one before it in the repository's catalogs, the one whose
	// template a package's new catalog renders from.
	Target, Source template.Catalog
	Packages       []Package
	Skipped        []Skip
	// Diagnostics refuse packages (errors) or note what was left alone for a reason to fix (warnings).
	Diagnostics []diag.Diagnostic
}

// Config is the repository configuration the catalogs were resolved from, named in refusals ("" and
// nil when there is none).
type Config struct {
	File string
	Data []byte
}

// Title is upstream's title of a package's promotion into catalog (v4.22: "... to catalog version 4.22.").
func Title(dir, catalog string) string {
	return fmt.Sprintf("Promote operator %s to catalog version %s.", dir, strings.TrimPrefix(catalog, "v"))
}

// Plan plans the promotion of the packages under root/operators (only pkg, a package or its directory,
// when not empty) into catalog to, one of catalogs (the repository's configured catalogs, in version
// order). A catalog the configuration does not list is a usage error naming the line of cfg to edit. A
// package whose ci.yaml maps the catalog before to (upstream's "source" catalog) is promoted as its
// fbc.version_promotion_strategy says; the others are skipped. Nothing is written.
func Plan(root string, catalogs []template.Catalog, to, pkg string, cfg Config) (*Promotion, error) {
	i, err := targetIndex(catalogs, to, cfg)
	if err != nil {
		return nil, err
	}
	if pkg != "" && (pkg != path.Base(pkg) || pkg == "." || pkg == ".." || strings.Contains(pkg, `\`)) {
		return nil, diag.UsageError(fmt.Errorf("--package %q: a package is a name, the directory under %s/ or the package it holds", pkg, template.OperatorsDir))
	}
	p := &Promotion{Root: root, Target: catalogs[i], Source: catalogs[i-1]}
	dirs := []string{catalogs[0].DirOf(pkg)}
	if pkg == "" {
		if dirs, err = packageDirs(root); err != nil {
			return nil, err
		}
	}
	for _, dir := range dirs {
		p.plan(dir, pkg != "")
	}
	p.Diagnostics = diag.Sort(p.Diagnostics)
	return p, nil
}

// targetIndex is the index of catalog to (or v<to>) in catalogs, which must have one before it.
func targetIndex(catalogs []template.Catalog, to string, cfg Config) (int, error) {
	var names []string
	for i, c := range catalogs {
		if c.Name == to || c.Name == "v"+to {
			if i == 0 {
				return 0, diag.UsageError(fmt.Errorf("catalog %s is the first of the repository's catalogs: there is no catalog before it to promote packages from", c.Name))
			}
			return i, nil
		}
		names = append(names, c.Name)
	}
	where := "the repository configuration"
	if cfg.File != "" {
		line, key := ConfigLine(cfg.Data)
		where = fmt.Sprintf("%s:%d: %s", cfg.File, line, key)
	}
	listed := "lists no catalog"
	if len(names) > 0 {
		listed = "lists " + strings.Join(names, ", ")
	}
	return 0, diag.UsageError(fmt.Errorf("%s %s, not %s: add %s there first (the catalog promote renders into), then promote", where, listed, to, to))
}

// packageDirs are the directories under root/operators that have a ci.yaml, sorted.
func packageDirs(root string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(root, template.OperatorsDir))
	if err != nil {
		return nil, fmt.Errorf("listing packages: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, template.OperatorsDir, e.Name(), template.CIFile)); err == nil {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// plan plans the promotion of the package in directory dir. named says the command line named it: what
// would only skip it in a promotion of every package refuses it.
func (p *Promotion) plan(dir string, named bool) {
	ci := path.Join(template.OperatorsDir, dir, template.CIFile)
	refuse := func(line int, hint, format string, args ...any) {
		p.Diagnostics = append(p.Diagnostics, diag.Diagnostic{Severity: diag.Error, Check: Check, File: ci, Line: line,
			Package: p.Target.PackageOf(dir), Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	skip := func(line int, hint, format string, args ...any) {
		if named {
			refuse(line, hint, format, args...)
			return
		}
		p.Skipped = append(p.Skipped, Skip{Dir: dir, Reason: fmt.Sprintf(format, args...)})
	}
	data, err := template.ReadFile(p.Root, ci, template.MaxCISize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && named {
			refuse(0, "", "no package directory %s/%s with a %s", template.OperatorsDir, dir, template.CIFile)
		} else if !errors.Is(err, fs.ErrNotExist) {
			refuse(0, "", "reading %s: %v", ci, err)
		}
		return
	}
	mappings, err := template.ParseCI(data, ci)
	if err != nil {
		refuse(0, "", "%v", err)
		return
	}
	if len(mappings) == 0 {
		skip(1, "", "maps no template to a catalog (no fbc.catalog_mapping, or fbc.enabled false)")
		return
	}
	for _, m := range mappings {
		if i := slices.Index(m.Catalogs, p.Target.Name); i >= 0 {
			skip(m.CatalogLines[i], "", "maps %s already (template %s)", p.Target.Name, m.Template)
			return
		}
	}
	if !slices.ContainsFunc(mappings, func(m template.Mapping) bool { return slices.Contains(m.Catalogs, p.Source.Name) }) {
		skip(mappings[0].Line, "add "+p.Target.Name+" to a mapping by hand", "maps no template to %s, the catalog before %s, so none to promote", p.Source.Name, p.Target.Name)
		return
	}
	strategy, line, err := StrategyOf(data)
	switch {
	case err != nil && named:
		refuse(line, "", "%v", err)
		return
	case err != nil:
		p.Diagnostics = append(p.Diagnostics, diag.Diagnostic{Severity: diag.Warning, Check: Check, File: ci, Line: line,
			Package: p.Target.PackageOf(dir), Message: err.Error() + "; not promoted (upstream's promotion skips it too)"})
		p.Skipped = append(p.Skipped, Skip{Dir: dir, Reason: err.Error()})
		return
	case strategy == Never:
		skip(line, "change it to review-needed or always to promote the package", "fbc.%s is never", StrategyKey)
		return
	}
	p.add(dir, ci, data, strategy, refuse)
}

// add plans the promotion of the package in dir, whose ci.yaml ci (data) maps the source catalog.
func (p *Promotion) add(dir, ci string, data []byte, strategy Strategy, refuse func(int, string, string, ...any)) {
	out := path.Join(p.Target.Dir, dir, template.RenderedFile)
	if _, err := os.Lstat(filepath.Join(p.Root, filepath.FromSlash(out))); err == nil {
		refuse(1, "remove it, or map "+p.Target.Name+" by hand", "%s exists, though this file does not map %s", out, p.Target.Name)
		return
	}
	after, line, err := AddCatalog(data, p.Source.Name, p.Target.Name)
	if err != nil {
		refuse(1, "", "%v", err)
		return
	}
	jobs, _, err := template.Plan(p.Root, []template.Catalog{p.Source}, dir)
	if err != nil || len(jobs) == 0 {
		refuse(1, "", "planning %s's render into %s: %v", dir, p.Target.Name, err)
		return
	}
	job := jobs[0] // the first mapping naming the source, the one AddCatalog extends
	job.Catalog, job.OPMVersion, job.CILine = p.Target, p.Target.OPMVersionOf(dir), line
	job.Package = p.Target.PackageOf(dir)
	p.Packages = append(p.Packages, Package{Dir: dir, Name: job.Package, Strategy: strategy, ReviewNeeded: strategy == ReviewNeeded,
		Title: Title(dir, p.Target.Name), CI: Change{File: ci, Before: data, After: after}, CILine: line, Job: job})
}

// Jobs are the renders of the promoted packages into the new catalog.
func (p *Promotion) Jobs() []template.Job {
	out := make([]template.Job, 0, len(p.Packages))
	for _, pk := range p.Packages {
		out = append(out, pk.Job)
	}
	return out
}

// Render renders the promoted packages' templates into the new catalog from src, concurrency jobs at a
// time; it writes nothing. Seed src's store from the committed catalogs (template.SeedFromCommitted) to
// render offline: every bundle a template names is in the catalogs it already renders into.
func (p *Promotion) Render(ctx context.Context, src template.Source, concurrency int, progress io.Writer) []template.Result {
	return template.RenderJobs(ctx, p.Root, p.Jobs(), src, concurrency, false, progress)
}
