package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/registry"
	"github.com/catalogbot/catalogbot/report"
)

// prOptions are what pr's command line says.
type prOptions struct {
	io              streams
	out             outputFlags
	limits          limitFlags
	in              pipeline.Input // Base, Head, Author, StageTimeout
	repoDir         string
	approvers       []string
	skipImages      bool
	summary         string
	smoke           smokeFlags
	registryTimeout time.Duration
}

func newPRCmd(runF runner[prOptions]) *cobra.Command {
	o := &prOptions{}
	cmd := &cobra.Command{
		Use:   "pr --base REF --head REF --author LOGIN",
		Short: "Run the pull-request pipeline on a range of a local catalog repository",
		Long: `pr runs the stages owners -> render -> validate -> graph -> images -> smoke on the change between
two revisions of a local git repository, reading .catalogbot.yaml and owners from the base revision, and
prints one report. It is what the GitHub Action and the bot run.

Exit codes: 0 all stages passed, 1 the change is invalid or not permitted, 2 configuration or usage
error, 3 infrastructure failure (registry, cluster) or internal error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.io = streamsOf(cmd)
			return orDefault(runF, runPR)(cmd.Context(), o)
		},
	}
	o.out.add(cmd)
	o.limits.add(cmd)
	cmd.Flags().StringVar(&o.repoDir, "repo", ".", "the catalog repository (work tree or bare)")
	cmd.Flags().StringVar(&o.in.Base, "base", "", "base revision (config and owners are read from it)")
	cmd.Flags().StringVar(&o.in.Head, "head", "HEAD", "head revision (the change)")
	cmd.Flags().StringVar(&o.in.Author, "author", "", "login of the change's author (required: the owners stage decides what this login may change)")
	cmd.Flags().StringSliceVar(&o.approvers, "approved-by", nil, "logins that approved the change (comma-separated or repeated)")
	cmd.Flags().BoolVar(&o.skipImages, "skip-images", false, "skip the image existence checks (offline)")
	cmd.Flags().StringVar(&o.summary, "summary", "", "also append the markdown report to this file (e.g. $GITHUB_STEP_SUMMARY)")
	o.smoke.add(cmd)
	cmd.Flags().DurationVar(&o.registryTimeout, "registry-timeout", 2*time.Minute, "deadline of each registry request (0: none)")
	cmd.Flags().DurationVar(&o.in.StageTimeout, "stage-timeout", 30*time.Minute, "deadline of each stage; one that runs out is an infrastructure failure (0: none)")
	_ = cmd.MarkFlagRequired("base")
	_ = cmd.MarkFlagRequired("author")
	return cmd
}

// runPR runs the pull request pipeline on the repository's range and prints its report.
func runPR(ctx context.Context, o *prOptions) error {
	repo, err := gitrepo.Open(o.repoDir)
	if err != nil {
		return err
	}
	in := o.in
	in.Repo = repo
	in.Limits = o.limits.override()
	in.SkipImages = o.skipImages
	in.Approvers = o.approvers
	// one breaker for the run: a registry host that timed out is not asked again by a later stage
	in.RemoteOptions = append(in.RemoteOptions, remote.WithTransport(registry.JobTransport(o.registryTimeout, 0, &registry.Breaker{})))
	if in.Smoke, err = o.smoke.load(); err != nil {
		return err
	}
	in.Observer = pipeline.TextProgress(o.io.err)
	r, err := pipeline.Run(ctx, in)
	if err != nil {
		return err
	}
	if o.summary != "" {
		if err := writeMarkdownSummary(o.summary, r); err != nil {
			return err
		}
	}
	return o.out.emit(o.io.out, r)
}

// smokeFlags are the cluster settings of the smoke stage (pr and action).
type smokeFlags struct {
	in             pipeline.SmokeInput
	kindConfigFile string
}

func (f *smokeFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringVar(&f.in.KubeconfigPath, "smoke-kubeconfig", "", "run smoke installs in this cluster (when smoke.enabled)")
	fs.StringVar(&f.in.ClusterName, "smoke-kind-cluster", "", "run smoke installs in this existing kind cluster (image archives are loaded into it; it is kept)")
	fs.StringVar(&f.in.NodeImage, "smoke-node-image", "", "create kind clusters for smoke installs with this node image")
	fs.StringToStringVar(&f.in.NodeImages, "smoke-node-images", nil, "kind node images by Kubernetes version (v1.33.13=IMAGE,...): the oldest that satisfies the changed bundles' minKubeVersion is used")
	fs.StringVar(&f.in.OLMManifestsDir, "smoke-olm-manifests", "", "install OLM from these manifests when the cluster lacks it")
	fs.StringVar(&f.in.OLM, "smoke-olm", "", "install every catalog with OLM v0, v1 or both, in place of .catalogbot.yaml's smoke.olm and smoke.olmByCatalog (default: the configuration's choice)")
	fs.StringVar(&f.in.OLMv1ManifestsDir, "smoke-olmv1-manifests", "", "install OLM v1 from these (self-contained) manifests when the cluster lacks it")
	fs.StringSliceVar(&f.in.ImageArchives, "smoke-image-archive", nil, "image archives to load into kind nodes (repeatable)")
	fs.BoolVar(&f.in.Keep, "smoke-keep", false, "keep the smoke cluster")
	fs.StringVar(&f.kindConfigFile, "smoke-kind-config", "", "kind cluster config (YAML) for the clusters smoke creates (e.g. networking.disableDefaultCNI for node images with their own CNI)")
}

// load is input with the kind config file read.
func (f *smokeFlags) load() (*pipeline.SmokeInput, error) {
	in := f.input()
	if in == nil || f.kindConfigFile == "" {
		return in, nil
	}
	data, err := os.ReadFile(f.kindConfigFile)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("--smoke-kind-config: %w", err))
	}
	in.KindConfig = string(data)
	return in, nil
}

// input is the smoke stage's cluster settings, nil when no flag gave a cluster.
func (f *smokeFlags) input() *pipeline.SmokeInput {
	if in := f.in; in.KubeconfigPath != "" || in.ClusterName != "" || in.NodeImage != "" || len(in.NodeImages) > 0 || in.OLMManifestsDir != "" ||
		in.OLMv1ManifestsDir != "" || in.OLM != "" {
		return &in
	}
	return nil
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
