package main

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/internal/ghaction"
)

// actionOptions are what action's command line says; the event comes from the GITHUB_* environment.
type actionOptions struct {
	io     streams
	getenv func(string) string
	action ghaction.Options
	smoke  smokeFlags
}

func newActionCmd(runF runner[actionOptions]) *cobra.Command {
	ao := &actionOptions{getenv: os.Getenv}
	o := &ao.action
	cmd := &cobra.Command{
		Use:   "action",
		Short: "Run the pipeline for a GitHub Actions workflow's event (what action.yml calls)",
		Long: `action reads GITHUB_EVENT_NAME and GITHUB_EVENT_PATH. On pull_request and pull_request_target it runs
the pipeline between the pull request's base and head SHAs in the checked-out repository (checkout with
fetch-depth: 0), with the approvals given on the head commit and team membership read with the token in
CATALOGBOT_GITHUB_TOKEN, and with --merge merges when every rule holds (head SHA as guard). On push to the
default branch it publishes the branch's tip as the bot does, and with --release releases each bundle
directory the push added with a release-config.yaml (bundle image pushed by digest, then one pull request
"Add <package> <version> to FBC" per bundle, opened with the token; docs/release.md). It prints workflow annotations and the text
report, appends the markdown report to GITHUB_STEP_SUMMARY and writes the outputs verdict, head_sha and
(when set) catalog_digest, merged, merge_sha, released, release_prs and release_failed to GITHUB_OUTPUT.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ao.io = streamsOf(cmd)
			return orDefault(runF, runAction)(cmd.Context(), ao)
		},
	}
	cmd.Flags().StringVar(&o.RepoDir, "repo", ".", "the checked-out repository")
	cmd.Flags().BoolVar(&o.SkipImages, "skip-images", false, "skip the image existence checks")
	ao.smoke.add(cmd)
	cmd.Flags().BoolVar(&o.Release, "release", false, "on a push to the default branch, release the bundle directories it added with a release-config.yaml (release.bundleImage of "+config.ConfigFile+")")
	cmd.Flags().BoolVar(&o.Merge, "merge", false, "merge the pull request (head SHA as guard) when the checks pass and every merge rule holds")
	return cmd
}

// runAction runs the pipeline for the workflow's event; the report's verdict is the exit code.
func runAction(ctx context.Context, o *actionOptions) error {
	opts := o.action
	var err error
	if opts.Smoke, err = o.smoke.load(); err != nil {
		return err
	}
	r, err := ghaction.Run(ctx, o.getenv, o.io.out, o.io.err, opts)
	if err != nil {
		return err
	}
	if code := r.ExitCode(); code != 0 {
		return errSilentExit{code: code}
	}
	return nil
}
