package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/internal/ghaction"
)

func newActionCmd() *cobra.Command {
	var o ghaction.Options
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run the pipeline for the pull request of a GitHub Actions workflow (what action.yml calls)",
		Long: `action reads GITHUB_EVENT_NAME and GITHUB_EVENT_PATH (a pull_request event), runs the pipeline
between the pull request's base and head SHAs in the checked-out repository (checkout with fetch-depth: 0),
prints workflow annotations and the text report, appends the markdown report to GITHUB_STEP_SUMMARY and
writes the outputs verdict, head_sha and (when published) catalog_digest to GITHUB_OUTPUT.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := ghaction.Run(cmd.Context(), os.Getenv, cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
			if err != nil {
				return err
			}
			if code := r.ExitCode(); code != 0 {
				return errSilentExit{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.RepoDir, "repo", ".", "the checked-out repository")
	cmd.Flags().BoolVar(&o.SkipImages, "skip-images", false, "skip the image existence checks")
	return cmd
}
