package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/registry"
	"github.com/catalogbot/catalogbot/report"
)

func newPRCmd() *cobra.Command {
	var (
		out        outputFlags
		in         pipeline.Input
		repoDir    string
		approvers  string
		skipImages bool
		summary    string
		smokeIn    pipeline.SmokeInput

		registryTimeout time.Duration
		limits          limitFlags
	)
	cmd := &cobra.Command{
		Use:   "pr --base REF --head REF [--author LOGIN]",
		Short: "Run the pull-request pipeline on a range of a local catalog repository",
		Long: `pr runs the stages owners -> render -> validate -> graph -> images -> smoke on the change between
two revisions of a local git repository, reading .catalogbot.yaml and owners from the base revision, and
prints one report. It is what the GitHub Action and the bot run.

Exit codes: 0 all stages passed, 1 the change is invalid or not permitted, 2 configuration or usage
error, 3 infrastructure failure (registry, cluster) or internal error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			repo, err := gitrepo.Open(repoDir)
			if err != nil {
				return err
			}
			in.Repo = repo
			in.Limits = limits.override()
			in.SkipImages = skipImages
			in.RemoteOptions = append(in.RemoteOptions, remote.WithTransport(registry.Transport(registryTimeout)))
			if smokeIn.KubeconfigPath != "" || smokeIn.ClusterName != "" || smokeIn.NodeImage != "" || len(smokeIn.NodeImages) > 0 || smokeIn.OLMManifestsDir != "" {
				in.Smoke = &smokeIn
			}
			in.Progress = cmd.ErrOrStderr()
			if approvers != "" {
				in.Approvers = strings.Split(approvers, ",")
			}
			r, err := pipeline.Run(cmd.Context(), in)
			if err != nil {
				return err
			}
			if summary != "" {
				if err := writeMarkdownSummary(summary, r); err != nil {
					return err
				}
			}
			return out.emit(cmd, r)
		},
	}
	out.add(cmd)
	limits.add(cmd)
	cmd.Flags().StringVar(&repoDir, "repo", ".", "the catalog repository (work tree or bare)")
	cmd.Flags().StringVar(&in.Base, "base", "", "base revision (config and owners are read from it)")
	cmd.Flags().StringVar(&in.Head, "head", "HEAD", "head revision (the change)")
	cmd.Flags().StringVar(&in.Author, "author", "", "login of the change's author")
	cmd.Flags().StringVar(&approvers, "approved-by", "", "comma-separated logins that approved the change")
	cmd.Flags().BoolVar(&skipImages, "skip-images", false, "skip the image existence checks (offline)")
	cmd.Flags().StringVar(&summary, "summary", "", "also append the markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)")
	cmd.Flags().StringVar(&smokeIn.KubeconfigPath, "smoke-kubeconfig", "", "run smoke installs in this cluster (when smoke.enabled)")
	cmd.Flags().StringVar(&smokeIn.ClusterName, "smoke-kind-cluster", "", "run smoke installs in this existing kind cluster (image archives are loaded into it; it is kept)")
	cmd.Flags().StringVar(&smokeIn.NodeImage, "smoke-node-image", "", "create kind clusters for smoke installs with this node image")
	cmd.Flags().StringToStringVar(&smokeIn.NodeImages, "smoke-node-images", nil, "kind node images by Kubernetes version (v1.33.13=IMAGE,...): the oldest that satisfies the changed bundles' minKubeVersion is used")
	cmd.Flags().StringVar(&smokeIn.OLMManifestsDir, "smoke-olm-manifests", "", "install OLM from these manifests when the cluster lacks it")
	cmd.Flags().StringSliceVar(&smokeIn.ImageArchives, "smoke-image-archive", nil, "image archives to load into kind nodes (repeatable)")
	cmd.Flags().BoolVar(&smokeIn.Keep, "smoke-keep", false, "keep the smoke cluster")
	cmd.Flags().DurationVar(&registryTimeout, "registry-timeout", 2*time.Minute, "deadline of each registry request (0: none)")
	cmd.Flags().DurationVar(&in.StageTimeout, "stage-timeout", 30*time.Minute, "deadline of each stage; one that runs out is an infrastructure failure (0: none)")
	_ = cmd.MarkFlagRequired("base")
	return cmd
}

// writeMarkdownSummary appends the markdown report to a file (GitHub's step summary is appended to).
func writeMarkdownSummary(path string, r *report.Report) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return diag.UsageError(fmt.Errorf("open summary file: %w", err))
	}
	if err := report.WriteMarkdown(f, r, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
