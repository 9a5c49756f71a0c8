package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
)

// runStagedRender is render --check --staged, the pre-commit drift gate: it judges what the commit
// changes, as pr does. Only the packages whose templates, ci.yaml or catalog directories the staged
// change touches are rendered and compared; a package the commit does not touch is not rendered at all,
// so its drift, or a registry outage on its bundles, is not the commit's (the summary says how many were
// left). A staged .catalogbot.yaml can change every render: then every package is checked.
func runStagedRender(ctx context.Context, io streams, f *repoFlags, setup *repoSetup, opts render.Options, out *outputFlags) error {
	wt, err := gitrepo.WorkTreeChanges(ctx, f.repo, "", true)
	if err != nil {
		return err
	}
	var notStaged []string
	for _, p := range wt.NotStaged {
		if _, ok := stagedPackageDir(setup, p); ok {
			notStaged = append(notStaged, p)
		}
	}
	if err := refuseNotStaged("render", f.repo, notStaged); err != nil {
		return err
	}
	all := slices.Contains(wt.Files, config.ConfigFile)
	touched := map[string]bool{}
	for _, p := range wt.Files {
		if dir, ok := stagedPackageDir(setup, p); ok {
			touched[dir] = true
		}
	}
	entries, err := os.ReadDir(filepath.Join(f.repo, template.OperatorsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tcats := template.CatalogsOf(setup.layout.Catalogs)
	var jobs []template.Job
	var warnings []string
	left := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if !all && !touched[e.Name()] {
			left++
			continue
		}
		j, w, err := template.Plan(f.repo, tcats, e.Name())
		switch {
		case errors.Is(err, fs.ErrNotExist): // no ci.yaml: the package maps no template
		case err != nil:
			return diag.UsageError(err)
		}
		jobs, warnings = append(jobs, j...), append(warnings, w...)
	}
	note := ""
	if left > 0 {
		note = fmt.Sprintf("; %s the commit does not touch not rendered (their drift is not this commit's; catalogbot render --check checks every one)",
			template.Plural(left, "package"))
	}
	return renderJobs(ctx, io, f, setup, jobs, warnings, true, opts, out, note)
}

// stagedPackageDir is the package directory a path of the repository belongs to: operators/<dir>/... or
// <catalog>/<dir>/...
func stagedPackageDir(setup *repoSetup, p string) (string, bool) {
	if rest, ok := strings.CutPrefix(p, template.OperatorsDir+"/"); ok {
		dir, _, nested := strings.Cut(rest, "/")
		return dir, nested
	}
	if _, rel, ok := setup.layout.CatalogOf(p); ok {
		dir, _, nested := strings.Cut(rel, "/")
		return dir, nested
	}
	return "", false
}
