package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/report"
)

func newValidateCmd() *cobra.Command {
	var (
		out          outputFlags
		changedSince string
		staged       bool
		limits       limitFlags
	)
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
is validated, with a progress line and a report stage per catalog.

Exit codes: 0 valid, 1 invalid, 2 usage, 3 internal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if root := append(args, ".")[0]; changedSince == "" && !staged {
				if _, cats, err := multiCatalogConfig(root); err != nil || cats != nil {
					if err != nil {
						return err
					}
					return runMultiValidate(cmd, root, cats, &out)
				}
			}
			ctx := cmd.Context()
			dir, err := catalogDirArg(ctx, args)
			if err != nil {
				return err
			}
			cfg, err := repoConfig(dir)
			if err != nil {
				return err
			}
			lim := limits.limits(cfg)
			boundMemory(dir)
			start := time.Now()
			var (
				res      *validate.Result
				scope    string
				fellBack bool
			)
			if changedSince != "" || staged {
				files, cerr := gitrepo.WorkTreeChanged(ctx, dir, changedSince, staged)
				if cerr != nil {
					return cerr
				}
				res, fellBack, err = validate.Changed(ctx, dir, validate.Change{Files: files, Before: gitrepo.Before(ctx, dir, changedSince, staged), Limits: lim})
				scope = fmt.Sprintf(" (%d changed files", len(files))
				if fellBack {
					scope += "; whole catalog validated"
				}
				scope += ")"
			} else {
				res, err = validate.Dir(ctx, dir, validate.Options{Limits: lim})
			}
			if err != nil {
				return err
			}
			st := report.Stage{Name: validate.Check, Status: report.StatusOf(res.Diagnostics, nil), Duration: time.Since(start),
				Diagnostics: res.Diagnostics, Truncated: res.Truncated, Summary: res.Summary() + scope}
			r := &report.Report{Title: "catalog " + dir, Stages: []report.Stage{st}}
			out.relocate(ctx, r, dir)
			return out.emit(cmd, r)
		},
	}
	out.add(cmd)
	limits.add(cmd)
	cmd.Flags().StringVar(&changedSince, "changed-since", "", "validate only packages changed since this git revision")
	cmd.Flags().BoolVar(&staged, "staged", false, "validate only packages with staged changes (pre-commit)")
	cmd.MarkFlagsMutuallyExclusive("changed-since", "staged")
	return cmd
}
