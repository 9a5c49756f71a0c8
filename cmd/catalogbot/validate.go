package main

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
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

// runValidate validates the catalog (or every configured catalog of a template-driven repository).
func runValidate(ctx context.Context, o *validateOptions) error {
	if err := policyPresets(o.policy.presets); err != nil {
		return err
	}
	changed := o.changedSince != "" || o.staged
	root := cmp.Or(o.dir, ".")
	if o.dir == "" && changed {
		// a pre-commit hook runs at the repository's top, but a hook's verdict must not depend on that
		if top, err := gitrepo.TopLevel(ctx, "."); err == nil {
			root = top
		}
	}
	setup, err := resolveRepo(root)
	if err != nil {
		return err
	}
	if setup.layout.Templates {
		if changed {
			return runChangedCatalogs(ctx, o, root, setup)
		}
		return runMultiValidate(ctx, o.io, root, setup, &o.out, o.policy)
	}
	if err := templateLayoutWithoutCatalogs(root); err != nil {
		return err
	}
	dir, err := catalogDirArg(ctx, o.dir, setup)
	if err != nil {
		return err
	}
	cfg, err := repoConfig(dir, setup)
	if err != nil {
		return err
	}
	lim := o.limits.limits(cfg)
	pol := newPolicyRun(cfg, o.policy)
	start := time.Now()
	var (
		res      *validate.Result
		scope    string
		fellBack bool
	)
	if o.changedSince != "" || o.staged {
		wt, cerr := gitrepo.WorkTreeChanges(ctx, dir, o.changedSince, o.staged)
		if cerr != nil {
			return cerr
		}
		if err := refuseNotStaged("validate", dir, wt.NotStaged); err != nil {
			return err
		}
		before := gitrepo.BeforeFiles(ctx, dir, o.changedSince, o.staged, wt.Files)
		if o.out.root == "" { // what relocate would ask git again
			o.out.root = repoRelativeTo(wt.Top, dir)
		}
		pol.collected = nil // the selection's load is not visited: the policy reads the selected files again
		res, fellBack, err = validate.Changed(ctx, dir, validate.Change{Files: wt.Files, Before: before, Limits: lim,
			Cache: selectCache(wt.GitDir, dir), Sized: boundMemoryTo})
		scope = fmt.Sprintf(" (%d changed files", len(wt.Files))
		if fellBack {
			scope += "; whole catalog validated"
		}
		scope += ")"
	} else {
		boundMemory(dir)
		res, err = validate.Dir(ctx, dir, validate.Options{Limits: lim, VisitBundle: pol.visitor()})
	}
	if err != nil {
		return err
	}
	st := report.Stage{Name: validate.Check, Status: report.StatusOf(res.Diagnostics, nil), Duration: time.Since(start),
		Diagnostics: res.Diagnostics, Truncated: res.Truncated, Summary: res.Summary() + scope}
	r := &report.Report{Title: "catalog " + dir, Stages: []report.Stage{st}}
	if pst, ok, err := policyStage(ctx, policyCatalog{dir: dir}, pol, res, lim, o.changedSince == "" && !o.staged || fellBack); err != nil {
		return err
	} else if ok {
		r.Stages = append(r.Stages, pst)
	}
	o.out.relocate(ctx, r, dir)
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

// runChangedCatalogs is validate --staged / --changed-since in a template-driven repository: each catalog
// holding a changed file validates the packages the change touched in it (validate.Changed, by package
// identity), as its own report stage; files outside the catalogs (templates, ci.yaml) are the drift
// gate's (render --check), not validate's.
func runChangedCatalogs(ctx context.Context, o *validateOptions, root string, setup *repoSetup) error {
	wt, err := gitrepo.WorkTreeChanges(ctx, root, o.changedSince, o.staged)
	if err != nil {
		return err
	}
	cats := setup.layout.Catalogs
	lim := o.limits.limits(setup.cfg)
	byCatalog := map[string][]string{}
	var notStaged []string
	for _, p := range wt.NotStaged {
		if _, _, ok := setup.layout.CatalogOf(p); ok {
			notStaged = append(notStaged, p)
		}
	}
	if err := refuseNotStaged("validate", root, notStaged); err != nil {
		return err
	}
	outside := 0
	for _, p := range wt.Files {
		c, rel, ok := setup.layout.CatalogOf(p)
		if !ok {
			outside++
			continue
		}
		byCatalog[c.Name] = append(byCatalog[c.Name], rel)
	}
	r := &report.Report{Title: fmt.Sprintf("the changed catalogs of %s", root)}
	for _, c := range cats {
		files := byCatalog[c.Name]
		if len(files) == 0 {
			continue
		}
		start := time.Now()
		dir := filepath.Join(root, filepath.FromSlash(c.Dir))
		before := gitrepo.BeforeFiles(ctx, dir, o.changedSince, o.staged, files)
		res, fellBack, err := validate.Changed(ctx, dir, validate.Change{Files: files, Before: before, Limits: lim,
			Cache: selectCache(wt.GitDir, dir), Sized: boundMemoryTo})
		if err != nil {
			return fmt.Errorf("validating catalog %s: %w", c.Name, err)
		}
		for i := range res.Diagnostics {
			if d := &res.Diagnostics[i]; d.File != "" {
				d.File = path.Join(path.Clean(c.Dir), d.File)
			}
		}
		scope := fmt.Sprintf(" (%s", template.Plural(len(files), "file")+" changed")
		if fellBack {
			scope += "; whole catalog validated"
		}
		st := report.Stage{Name: validate.Check + " " + c.Name, Status: report.StatusOf(res.Diagnostics, nil), Duration: time.Since(start),
			Diagnostics: res.Diagnostics, Truncated: res.Truncated, Summary: c.Name + ": " + res.Summary() + scope + ")"}
		fmt.Fprintf(o.io.err, "validate %s: %s (%s)\n", c.Name, st.Status, st.Duration.Round(time.Millisecond))
		r.Stages = append(r.Stages, st)
	}
	if len(r.Stages) == 0 {
		r.Stages = append(r.Stages, report.Stage{Name: validate.Check, Status: report.Skipped,
			Summary: fmt.Sprintf("no catalog file changed (%s outside the %d catalogs of %s)", template.Plural(outside, "file"), len(cats), config.ConfigFile)})
	}
	if o.out.root == "" {
		o.out.root = repoRelativeTo(wt.Top, root)
	}
	o.out.relocate(ctx, r, root)
	return o.out.emit(o.io.out, r)
}
