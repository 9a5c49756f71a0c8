package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/report"
)

func newCheckImagesCmd() *cobra.Command {
	var (
		out outputFlags
		c   images.Checker
	)
	cmd := &cobra.Command{
		Use:   "check-images [DIR]",
		Short: "Check that every image the catalog references exists (one manifest HEAD per unique image)",
		Long: `check-images collects every bundle image and related image of the catalog in DIR and checks each
unique reference with one manifest request (no layers are pulled), with bounded concurrency and retries.
Credentials come from the docker config. Missing images fail (exit 1); registries that are down or refuse
the request are infrastructure errors (exit 3) and never pass silently.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := catalogDirArg(cmd.Context(), args)
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := validate.Dir(cmd.Context(), dir, validate.Options{})
			if err != nil {
				return err
			}
			refs := images.RefsFromCatalog(res.Catalog)
			ds, cerr := c.Check(cmd.Context(), refs)
			st := report.Stage{Name: images.CheckName, Status: report.StatusOf(ds, cerr), Duration: time.Since(start), Diagnostics: ds,
				Summary: fmt.Sprintf("%d image references in %d bundles", len(refs), len(res.Catalog.Bundles))}
			if cerr != nil {
				st.Err = cerr.Error()
			}
			r := &report.Report{Title: "images of catalog " + dir, Stages: []report.Stage{st}}
			out.relocate(cmd.Context(), r, dir)
			return out.emit(cmd, r)
		},
	}
	out.add(cmd)
	cmd.Flags().IntVar(&c.Concurrency, "concurrency", 8, "requests in flight at once")
	cmd.Flags().BoolVar(&c.Policy.RequireDigest, "require-digest", false, "fail images referenced by tag")
	cmd.Flags().StringSliceVar(&c.Policy.AllowedRegistries, "allowed-registry", nil, "registries images may come from (repeatable)")
	cmd.Flags().StringSliceVar(&c.Policy.RequiredPlatforms, "require-platform", nil, "platforms every image must provide, e.g. linux/arm64 (repeatable)")
	return cmd
}
