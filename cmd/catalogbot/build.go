package main

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/registry"
	"github.com/catalogbot/catalogbot/report"
)

// buildFlags are the image options build and publish share.
type buildFlags struct {
	base      string
	platforms []string
}

func (b *buildFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&b.base, "base", build.DefaultBase, "base image (opm); a multi-arch base gives a multi-arch catalog")
	cmd.Flags().StringSliceVar(&b.platforms, "platform", nil, "platforms to build (default: every platform of the base), e.g. linux/amd64,linux/arm64")
}

func (b *buildFlags) options() (build.Options, error) {
	plats, err := build.ParsePlatforms(b.platforms)
	if err != nil {
		return build.Options{}, err
	}
	epoch, err := build.EpochFromEnv()
	if err != nil {
		return build.Options{}, diag.UsageError(err)
	}
	o := build.Options{Base: b.base, Platforms: plats, Epoch: epoch}
	if registry.RefIsLoopback(b.base) {
		o.NameOptions = []name.Option{name.Insecure}
	}
	return o, nil
}

// buildOptions are what build's command line says.
type buildOptions struct {
	io         streams
	image      buildFlags
	dir        string
	output     string
	tag        string
	dockerfile bool
}

func newBuildCmd(runF runner[buildOptions]) *cobra.Command {
	o := &buildOptions{}
	cmd := &cobra.Command{
		Use:   "build DIR",
		Short: "Build the catalog image from a file-based catalog without a daemon (or write its Dockerfile)",
		Long: `build puts the file-based catalog in DIR into an image: the base image (opm) plus one reproducible
layer with the catalog at /configs and the label operators.operatorframework.io.index.configs.v1=/configs.
A multi-arch base gives a multi-arch index. Identical input gives an identical digest (SOURCE_DATE_EPOCH
sets the timestamps). Write it with --output oci-layout:DIR or tarball:FILE, or push it with publish.

--dockerfile prints the Dockerfile opm generate dockerfile would write, for your own builder.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir = streamsOf(cmd), args[0]
			return orDefault(runF, runBuild)(cmd.Context(), o)
		},
	}
	o.image.add(cmd)
	cmd.Flags().StringVar(&o.output, "output", "", "oci-layout:DIR or tarball:FILE")
	cmd.Flags().StringVar(&o.tag, "tag", "catalog:latest", "image name recorded in the layout or tarball")
	cmd.Flags().BoolVar(&o.dockerfile, "dockerfile", false, "print the Dockerfile opm generate dockerfile would write instead")
	return cmd
}

// publishOptions are what publish's command line says.
type publishOptions struct {
	io          streams
	out         outputFlags
	image       buildFlags
	dir, target string
	tags        []string
	kubernetes  string
}

func newPublishCmd(runF runner[publishOptions]) *cobra.Command {
	o := &publishOptions{}
	cmd := &cobra.Command{
		Use:   "publish DIR IMAGE",
		Short: "Validate, build and push the catalog image: by digest first, then move the tag",
		Long: `publish validates the catalog in DIR (and refuses to publish one that does not validate), builds
its image as build does, pushes it by digest, then moves IMAGE's tag to that digest and prints the digest.
Base layers already in the registry, or mountable from another repository of it, are not uploaded again.
A failed push never moves the tag. Credentials come from the docker config (docker login / DOCKER_CONFIG).

With --kubernetes (the Kubernetes version the catalog serves), IMAGE and each --tag may use
{kube_major_version}, {kube_minor_version} and {kube_patch_version}: the image is also pushed under every
--tag (in IMAGE's repository), and the report prints the CatalogSource whose olm.catalogImageTemplate
annotation follows the first tag named by those placeholders alone. In a repository, configure the tags
in .catalogbot.yaml instead (catalogs.tags): publishing there moves each tag only forward.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir, o.target = streamsOf(cmd), args[0], args[1]
			return orDefault(runF, runPublish)(cmd.Context(), o)
		},
	}
	o.image.add(cmd)
	o.out.add(cmd)
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "also push under this tag of IMAGE's repository (repeatable), such as 'v{kube_major_version}.{kube_minor_version}'")
	cmd.Flags().StringVar(&o.kubernetes, "kubernetes", "", "the Kubernetes version the catalog serves (1.Y or 1.Y.Z), for the placeholders of IMAGE and --tag")
	return cmd
}

// runBuild builds the catalog image into a layout or tarball (or prints the Dockerfile).
func runBuild(ctx context.Context, o *buildOptions) error {
	if o.dockerfile {
		_, err := o.io.out.Write(build.Dockerfile(o.image.base, o.dir))
		return err
	}
	if o.output == "" {
		return diag.UsageError(fmt.Errorf("say where the image goes: --output oci-layout:DIR or --output tarball:FILE (or use catalogbot publish)"))
	}
	out, err := build.ParseOutput(o.output)
	if err != nil {
		return err
	}
	opts, err := o.image.options()
	if err != nil {
		return err
	}
	ref, err := name.ParseReference(o.tag)
	if err != nil {
		return diag.UsageError(fmt.Errorf("--tag %q: %w", o.tag, err))
	}
	res, err := build.Image(ctx, o.dir, opts)
	if err != nil {
		return err
	}
	if err := out.Write(ctx, res, ref); err != nil {
		return err
	}
	dig, err := res.Digest()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.io.out, "%s\n", dig)
	return err
}

// runPublish validates, builds and pushes the catalog image, by digest and then the tag.
func runPublish(ctx context.Context, o *publishOptions) error {
	opts, err := o.image.options()
	if err != nil {
		return err
	}
	target, tags, follow, err := config.ResolveImages(o.target, o.tags, o.kubernetes)
	if err != nil {
		return diag.UsageError(fmt.Errorf("publish %s: %w", o.target, err))
	}
	st, digest := pipeline.Publish(ctx, pipeline.PublishInput{CatalogDir: o.dir, Target: target, Tags: tags, Build: opts})
	if digest != "" {
		st.Details += pipeline.CatalogSourceDetails([]config.Catalog{{Kubernetes: o.kubernetes, FollowImage: follow}})
	}
	r := &report.Report{Title: "publish " + o.dir + " to " + target, Stages: []report.Stage{st}}
	if digest != "" {
		r.Outputs = map[string]string{"catalog_digest": digest}
	}
	return o.out.emit(o.io.out, r)
}
