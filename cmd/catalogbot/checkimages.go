package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/report"
)

// checkImagesOptions are what check-images' command line says.
type checkImagesOptions struct {
	io      streams
	out     outputFlags
	dir     string // "" when not given
	checker images.Checker
}

func newCheckImagesCmd(runF runner[checkImagesOptions]) *cobra.Command {
	o := &checkImagesOptions{}
	cmd := &cobra.Command{
		Use:   "check-images [DIR]",
		Short: "Check that every image the catalog references exists (one manifest HEAD per unique image)",
		Long: `check-images collects every bundle image and related image of the catalog in DIR and checks each
unique reference with one manifest request (no layers are pulled), with bounded concurrency and retries.
Credentials come from the docker config. Missing images fail (exit 1); registries that are down or refuse
the request are infrastructure errors (exit 3) and never pass silently.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir = streamsOf(cmd), optionalArg(args)
			return orDefault(runF, runCheckImages)(cmd.Context(), o)
		},
	}
	o.out.add(cmd)
	cmd.Flags().IntVar(&o.checker.Concurrency, "concurrency", 8, "requests in flight at once")
	cmd.Flags().BoolVar(&o.checker.Policy.RequireDigest, "require-digest", false, "fail images referenced by tag")
	cmd.Flags().StringSliceVar(&o.checker.Policy.AllowedRegistries, "allowed-registry", nil, "registries images may come from (repeatable)")
	cmd.Flags().StringSliceVar(&o.checker.Policy.RequiredPlatforms, "require-platform", nil, "platforms every image must provide, e.g. linux/arm64 (repeatable)")
	return cmd
}

// runCheckImages checks every image the catalog references.
func runCheckImages(ctx context.Context, o *checkImagesOptions) error {
	dir, err := (&repoSetup{}).catalogDir(ctx, o.dir) // one directory: nothing to resolve beyond it
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := validate.Dir(ctx, dir, validate.Options{Dir: o.out.filesDir(ctx, dir, false)})
	if err != nil {
		return err
	}
	refs := images.RefsFromCatalog(res.Catalog)
	ds, cerr := o.checker.Check(ctx, refs)
	st := report.Stage{Name: images.CheckName, Status: report.StatusOf(ds, cerr), Duration: time.Since(start), Diagnostics: ds,
		Summary: fmt.Sprintf("%d image references in %d bundles", len(refs), len(res.Catalog.Bundles))}
	if cerr != nil {
		st.Err = cerr.Error()
	}
	r := &report.Report{Title: "images of catalog " + dir, Stages: []report.Stage{st}}
	return o.out.emit(o.io.out, r)
}
