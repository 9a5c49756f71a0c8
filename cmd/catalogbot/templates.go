package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// repoFlags select a template-driven multi-catalog repository (its .catalogbot.yaml has catalogs:).
type repoFlags struct {
	repo     string
	pkg      string
	staged   bool
	offline  bool
	seedFrom string
	cacheDir string
}

func (f *repoFlags) addRender(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.repo, "repo", ".", "repository root; when its "+config.ConfigFile+" lists catalogs, render every template mapping of operators/*/ci.yaml")
	cmd.Flags().StringVar(&f.pkg, "package", "", "with catalogs: render only this package's mappings")
	cmd.Flags().BoolVar(&f.staged, "staged", false, "with catalogs and --check (pre-commit): only the packages the staged change touches; others' drift is not the commit's")
	cmd.MarkFlagsMutuallyExclusive("staged", "package")
	cmd.Flags().BoolVar(&f.offline, "offline", false, "with catalogs: pull nothing; bundles come from the cache only")
	cmd.Flags().StringVar(&f.seedFrom, "seed-from", "", "with catalogs: a trusted checkout (the base branch) whose committed catalogs seed the bundle cache; never a pull request's files (default: the catalogs HEAD commits, read from git, never the work tree)")
	cmd.Flags().StringVar(&f.cacheDir, "template-cache-dir", "", "with catalogs: where pulled bundle renders are kept by digest ($XDG_CACHE_HOME/catalogbot/templates)")
}

// runTemplateRender renders every mapping (or --package's) into every catalog, writing the files, or,
// with check, failing with a diff per catalog file that differs from the render.
func runTemplateRender(ctx context.Context, io streams, f *repoFlags, setup *repoSetup, check bool, opts render.Options, out *outputFlags) error {
	tcats := template.CatalogsOf(setup.layout.Catalogs)
	if f.staged {
		if !check {
			return diag.UsageError(errors.New("render --staged checks what a commit holds: use it with --check"))
		}
		return runStagedRender(ctx, io, f, setup, opts, out)
	}
	jobs, warnings, err := template.Plan(f.repo, tcats, f.pkg)
	if f.pkg != "" && errors.Is(err, fs.ErrNotExist) {
		ci := path.Join(template.OperatorsDir, f.pkg, template.CIFile)
		return diag.UsageError(fmt.Errorf("--package %s: %s does not exist in %s, so no template maps the package (the packages with templates are the directories of %s/)",
			f.pkg, ci, f.repo, template.OperatorsDir))
	}
	if err != nil {
		return diag.UsageError(err)
	}
	return renderJobs(ctx, io, f, setup, jobs, warnings, check, opts, out, "")
}

// renderJobs renders jobs (seeding the bundle cache from --seed-from or HEAD), writing the files or, with
// check, comparing them with the committed ones, and emits the render stage; note ends its summary.
func renderJobs(ctx context.Context, io streams, f *repoFlags, setup *repoSetup, jobs []template.Job, warnings []string, check bool,
	opts render.Options, out *outputFlags, note string) error {
	start := time.Now()
	tcats := template.CatalogsOf(setup.layout.Catalogs)
	var err error
	store := templateStore(f.cacheDir, opts.NoCache)
	held := store.Len()
	seeded := ""
	if f.seedFrom != "" {
		if err := template.SeedFromCommitted(ctx, store, f.seedFrom, tcats, jobs); err != nil {
			return err
		}
		seeded = "the committed catalogs of " + f.seedFrom
	} else if seeded, err = seedFromHEAD(ctx, store, f.repo, setup.layout, jobs); err != nil {
		return err
	}
	src := &template.Images{Store: store, Offline: f.offline, SeededTags: check}
	if !f.offline {
		opts.Bundle.CSVMetadata = false
		if src.Pull, err = render.NewBundleImages(opts); err != nil {
			return err
		}
	}
	results := template.RenderJobs(ctx, f.repo, jobs, src, opts.Concurrency, check, io.err)
	ds := template.GroupDrift(template.Diagnostics(f.repo, results, check), tcats)
	for _, w := range warnings {
		ds = append(ds, diag.Diagnostic{Severity: diag.Warning, Check: template.Check, Rule: "template-unknown-catalog", Message: w})
	}
	st := report.Stage{Name: template.Check, Diagnostics: diag.Sort(ds), Duration: time.Since(start), Status: report.Pass}
	verb := "rendered"
	if check {
		verb = "rendered and compared with the committed catalogs"
	} else if err := template.WriteResults(f.repo, results); err != nil {
		st.Status, st.Err = report.Error, err.Error()
	}
	into := map[string]bool{}
	for _, j := range jobs {
		into[j.Catalog.Name] = true
	}
	st.Summary = fmt.Sprintf("%s into %s %s", template.Plural(len(jobs), "template mapping"), template.Plural(len(into), "catalog"), verb)
	if seeded != "" {
		st.Summary += fmt.Sprintf(" (bundle cache seeded from %s: %d entries)", seeded, store.Len()-held)
	}
	st.Summary += note
	if st.Status == report.Pass {
		ierr := template.InfraErr(results)
		st.Status = report.StatusOf(st.Diagnostics, ierr)
		if ierr != nil {
			st.Err = ierr.Error()
		}
	}
	return out.emit(io.out, &report.Report{Title: "render " + f.repo, Stages: []report.Stage{st}})
}

// seedFromHEAD seeds store from the catalogs committed at HEAD of the git repository holding repo (read
// from git, never from the work tree, whose uncommitted changes are the change being checked), limited
// to the packages of jobs. It says what it seeded from ("" outside a repository or before its first
// commit).
func seedFromHEAD(ctx context.Context, store *template.Store, repo string, layout *pipeline.Layout, jobs []template.Job) (string, error) {
	top, err := gitrepo.TopLevel(ctx, repo)
	if err != nil {
		return "", nil
	}
	g, err := gitrepo.Open(top)
	if err != nil {
		return "", nil
	}
	head, err := g.Resolve("HEAD")
	if err != nil {
		return "", nil // no commit yet
	}
	pkgs := map[string]bool{}
	for _, j := range jobs {
		pkgs[j.Dir] = true
	}
	include := func(p string) bool {
		_, rel, ok := layout.CatalogOf(p)
		pkg, _, _ := strings.Cut(rel, "/")
		return ok && pkgs[pkg]
	}
	fsys, err := g.TreeFS(head, repoRelativeTo(top, repo), include)
	if err != nil {
		return "", err
	}
	if err := template.SeedFromFS(ctx, store, fsys, template.CatalogsOf(layout.Catalogs), jobs); err != nil {
		return "", fmt.Errorf("seeding the bundle cache from HEAD (%s): %w", head.Hash.String()[:12], err)
	}
	return fmt.Sprintf("HEAD (%s)'s committed catalogs", head.Hash.String()[:12]), nil
}

// repoArg is " --repo ROOT", or "" for the working directory.
func repoArg(root string) string {
	if filepath.Clean(root) == "." {
		return ""
	}
	return " --repo " + root
}

// templateLayoutWithoutCatalogs is a usage error saying what to add when root is laid out as a
// template-driven repository (operators/<package>/ci.yaml files mapping templates to catalogs, catalog
// directories under catalogs/) but its .catalogbot.yaml has no catalogs:, which would make it one
// catalog; nil otherwise.
func templateLayoutWithoutCatalogs(root string) error {
	// catalogs/ first: a single-catalog repository (every validate and render of one) reads no ci.yaml
	entries, err := os.ReadDir(filepath.Join(root, "catalogs"))
	if err != nil {
		return nil
	}
	var versions []string
	for _, e := range entries {
		if e.IsDir() {
			versions = append(versions, e.Name())
		}
	}
	if len(versions) == 0 {
		return nil
	}
	cis, _ := filepath.Glob(filepath.Join(root, template.OperatorsDir, "*", template.CIFile))
	mapped := 0
	for _, ci := range cis {
		if data, err := os.ReadFile(ci); err == nil && strings.Contains(string(data), "catalog_mapping") {
			mapped++
		}
	}
	if mapped == 0 {
		return nil
	}
	return diag.UsageError(fmt.Errorf("%s is laid out as a template-driven repository (%d %s files under %s/ map templates to catalogs; catalogs/ holds %s) "+
		"but %s has no catalogs:, so it would be read as one catalog; run catalogbot init --force%s to write a complete %s (catalogs pattern, "+
		"migration level and migrateFrom, opm per package, as the committed catalogs show them) and see what reproduces",
		root, mapped, template.CIFile, template.OperatorsDir, template.Plural(len(versions), "catalog directory"), config.ConfigFile, repoArg(root), config.ConfigFile))
}

// templateStore is the bundle cache of template renders: in dir when given, else in the user cache
// directory's catalogbot/templates, in memory only with noCache (and no dir) or without a user cache
// directory.
func templateStore(dir string, noCache bool) *template.Store {
	if dir == "" && !noCache {
		if base, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(base, "catalogbot", "templates")
		}
	}
	return template.NewStore(dir)
}
