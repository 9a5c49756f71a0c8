package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// validateOptions are what validate's command line says.
type validateOptions struct {
	io           streams
	out          outputFlags
	limits       limitFlags
	dir          string // "" when not given
	changedSince string
	staged       bool
	policy       policyFlags // presets added to the configuration's policy, --since
}

func newValidateCmd(runF runner[validateOptions]) *cobra.Command {
	o := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Validate a file-based catalog exactly as opm validate does, reporting every problem with file:line",
		Long: `Validate the file-based catalog in DIR against every rule of
opm validate (operator-registry v1.73.0). All problems are reported at once, each with its file, line,
package, channel or bundle, a rule id and a hint. Paths are relative to the repository root (see
--path-prefix). Without DIR, in a git repository, the catalog is the repository's catalog.dir
(.catalogbot.yaml, default "catalog") when it exists; else the current directory. A .git directory is
never read.

With --changed-since REF (or --staged, for a pre-commit hook) only the packages the change touched are
validated: every package named by a blob of a changed file, before or after the change, with all of its
blobs wherever they live. The verdict is that of validating the whole catalog (when it was valid before
the change); the whole catalog is validated when that cannot be decided safely.

When DIR holds a .catalogbot.yaml with catalogs: (a template-driven repository), every configured catalog
is validated, with a progress line and a report stage per catalog. With --changed-since or --staged (and
without DIR, the repository's top is DIR), only the catalogs holding a changed file are validated, each
for the packages the change touched in it; changed files outside the catalogs are not validate's (the
drift gate, render --check, covers templates).

Exit codes: 0 valid, 1 invalid, 2 usage, 3 internal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir = streamsOf(cmd), optionalArg(args)
			return orDefault(runF, runValidate)(cmd.Context(), o)
		},
	}
	o.out.add(cmd)
	o.limits.add(cmd)
	cmd.Flags().StringVar(&o.changedSince, "changed-since", "", "validate only packages changed since this git revision")
	cmd.Flags().BoolVar(&o.staged, "staged", false, "validate only packages with staged changes (pre-commit)")
	cmd.Flags().StringSliceVar(&o.policy.presets, "policy", nil, "also run the rules of these policy presets (community, olmv1), beside the policy of .catalogbot.yaml")
	cmd.Flags().StringVar(&o.policy.since, "since", "", "report the policy findings this git revision already had as pre-existing notes (the change's baseline)")
	cmd.MarkFlagsMutuallyExclusive("changed-since", "staged")
	return cmd
}

// runValidate validates the catalog (or every configured catalog of a template-driven repository): one
// path whatever the layout, the number of catalogs changing only how the report names them.
func runValidate(ctx context.Context, o *validateOptions) error {
	if err := policyPresets(o.policy.presets); err != nil {
		return err
	}
	sc, err := resolveValidateScope(ctx, o)
	if err != nil {
		return err
	}
	lim, pol := o.limits.limits(sc.cfg), pipeline.NewTreePolicy(sc.cfg, o.policy.presets, o.policy.since)
	if o.changedSince != "" || o.staged {
		return runValidateChanged(ctx, o, sc, lim, pol)
	}
	r := &report.Report{Title: sc.title(false)}
	done := 0
	results, err := pipeline.ValidateTree(ctx, pipeline.Tree{Root: sc.root, Dir: o.out.filesDir(ctx, sc.root, sc.named), Catalogs: sc.catalogs, Limits: lim, Policy: pol,
		Sized: boundMemoryTo, Done: func(cr validate.CatalogResult) {
			done++
			sc.progress(o.io.err, done, len(sc.catalogs), cr)
		}})
	if err != nil {
		return err
	}
	for _, tr := range results {
		if tr.Err != nil && !sc.named {
			return tr.Err // one catalog directory that cannot be validated is the command's error
		}
		r.Stages = append(r.Stages, sc.stage(tr.CatalogResult, ""))
		if tr.Policy != nil {
			r.Stages = append(r.Stages, *tr.Policy)
		}
	}
	return o.out.emit(o.io.out, r)
}

// runValidateChanged is validate --staged / --changed-since: each catalog holding a changed file (a
// catalog directory always) validates the packages the change touched in it (validate.Changed, by
// package identity); files outside the catalogs (templates, ci.yaml) are the drift gate's (render
// --check), not validate's.
func runValidateChanged(ctx context.Context, o *validateOptions, sc *validateScope, lim validate.Limits, pol *pipeline.TreePolicy) error {
	wt, err := gitrepo.WorkTreeChanges(ctx, sc.root, o.changedSince, o.staged)
	if err != nil {
		return err
	}
	var notStaged []string
	for _, p := range wt.NotStaged {
		if _, _, ok := sc.catalogOf(p); ok {
			notStaged = append(notStaged, p)
		}
	}
	if err := refuseNotStaged("validate", sc.root, notStaged); err != nil {
		return err
	}
	if o.out.root == "" { // git has said where the repository is: no need to ask again
		o.out.root = repoRelativeTo(wt.Top, sc.root)
	}
	top := o.out.filesDir(ctx, sc.root, sc.named)
	byCatalog, outside := map[string][]string{}, 0
	for _, p := range wt.Files {
		c, rel, ok := sc.catalogOf(p)
		if !ok {
			outside++
			continue
		}
		byCatalog[c.Dir] = append(byCatalog[c.Dir], rel)
	}
	r := &report.Report{Title: sc.title(true)}
	for _, c := range sc.catalogs {
		files := byCatalog[c.Dir]
		if len(files) == 0 && sc.named {
			continue
		}
		start := time.Now()
		dir := sc.dirOf(c)
		before := gitrepo.BeforeFiles(ctx, dir, o.changedSince, o.staged, files)
		res, fellBack, err := validate.Changed(ctx, dir, validate.Change{Files: files, Before: before, Limits: lim,
			Cache: selectCache(wt.GitDir, dir), Sized: boundMemoryTo, Dir: top.Sub(c.Dir)})
		if err != nil {
			return sc.catalogErr("validating", c, err)
		}
		cr := validate.CatalogResult{CatalogDir: validate.CatalogDir{Name: c.Name, Dir: c.Dir}, Result: res, Duration: time.Since(start)}
		sc.progress(o.io.err, 0, 0, cr)
		r.Stages = append(r.Stages, sc.stage(cr, changedScope(sc.named, len(files), fellBack)))
		// the selection's load is not visited: the policy reads the selected files again
		pst, ok, err := pol.Stage(ctx, pipeline.PolicyTarget{Dir: dir, Catalog: c, Result: res, Limits: lim, Whole: fellBack})
		if err != nil {
			return sc.catalogErr("policy of", c, err)
		}
		if ok {
			r.Stages = append(r.Stages, pst)
		}
	}
	if len(r.Stages) == 0 {
		r.Stages = append(r.Stages, report.Stage{Name: validate.Check, Status: report.Skipped,
			Summary: fmt.Sprintf("no catalog file changed (%s outside the %d catalogs of %s)", template.Plural(outside, "file"), len(sc.catalogs), config.ConfigFile)})
	}
	return o.out.emit(o.io.out, r)
}

// refuseNotStaged refuses --staged when the work tree, which is what is validated, is not what the commit
// holds under dir: a fix left unstaged, or an untracked catalog file someone forgot to add, would make a
// broken commit pass. (The pre-commit framework stashes unstaged changes itself; untracked files stay.)
func refuseNotStaged(verb, dir string, files []string) error {
	if len(files) == 0 {
		return nil
	}
	shown := files[:min(len(files), 5)]
	more := ""
	if len(files) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(files)-len(shown))
	}
	return diag.UsageError(fmt.Errorf("%s --staged: %s differ from what the commit holds (unstaged changes or untracked files under %s: %s%s): "+
		"stage them, stash them (git stash --keep-index --include-untracked) or ignore them, so what is checked is what is committed",
		verb, template.Plural(len(files), "file"), dir, strings.Join(shown, ", "), more))
}
