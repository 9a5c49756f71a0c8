package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/internal/diag"
	"github.com/catalogbot/catalogbot/internal/gitx"
	"github.com/catalogbot/catalogbot/pipeline/report"
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
		Long: `Validate the file-based catalog in DIR (default: the current directory) against every rule of
opm validate (operator-registry v1.73.0). All problems are reported at once, each with its file, line,
package, channel or bundle, a rule id and a hint.

With --changed-since REF (or --staged, for a pre-commit hook) only the package directories whose files
changed are validated; the whole catalog is validated when that cannot be done safely.

Exit codes: 0 valid, 1 invalid, 2 usage, 3 internal.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			ctx := cmd.Context()
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
				files, cerr := gitx.Changed(ctx, dir, changedSince, staged)
				if cerr != nil {
					return cerr
				}
				res, fellBack, err = validate.Changed(ctx, dir, files, lim)
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
			st := report.Stage{Name: validate.Check, Status: report.Pass, Duration: time.Since(start),
				Diagnostics: res.Diagnostics, Truncated: res.Truncated, Summary: res.Summary() + scope}
			if diag.HasErrors(res.Diagnostics) {
				st.Status = report.Fail
			}
			return out.emit(cmd, &report.Report{Title: "catalog " + dir, Stages: []report.Stage{st}})
		},
	}
	out.add(cmd)
	limits.add(cmd)
	cmd.Flags().StringVar(&changedSince, "changed-since", "", "validate only packages changed since this git revision")
	cmd.Flags().BoolVar(&staged, "staged", false, "validate only packages with staged changes (pre-commit)")
	cmd.MarkFlagsMutuallyExclusive("changed-since", "staged")
	return cmd
}
