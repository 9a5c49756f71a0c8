package main

import (
	"github.com/spf13/cobra"
)

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "catalogbot",
		Short: "Keep an OLM file-based catalog repository healthy, the GitOps way",
		Long: `catalogbot validates, renders, checks the images of, smoke-installs, builds and publishes an OLM
file-based catalog, and runs all of it for pull requests from the CLI, a GitHub Action or a GitHub App.

Exit codes: 0 ok, 1 invalid catalog (your change), 2 usage or repository configuration, 3 infrastructure
or internal failure (not your catalog).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(
		newVersionCmd(),
		newInitCmd(nil),
		newValidateCmd(nil),
		newFmtCmd(nil),
		newRenderCmd(nil),
		newRenderTemplateCmd(nil),
		newBumpCmd(nil),
		newReleaseCmd(nil),
		newPromoteCmd(nil),
		newDemoCmd(nil),
		newPRCmd(nil),
		newSmokeCmd(nil),
		newActionCmd(nil),
		newBuildCmd(nil),
		newPublishCmd(nil),
		newCheckImagesCmd(nil),
		newServeCmd(nil),
	)
	return root
}
