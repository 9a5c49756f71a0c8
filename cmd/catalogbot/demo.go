package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/internal/demo"
)

// demoOptions are what demo's command line says.
type demoOptions struct {
	io   streams
	demo demo.Options
}

func newDemoCmd(runF runner[demoOptions]) *cobra.Command {
	do := &demoOptions{}
	o := &do.demo
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole pipeline on a sample catalog repository, with an embedded registry (no GitHub, no Docker)",
		Long: `demo creates a catalog repository with two pull requests in a temp dir, starts an embedded OCI
registry seeded with bundle images and a two-platform base image, runs the pull-request pipeline on both
(one is rejected: its author owns nothing and it rewrites a released bundle), merges the one that passes,
then builds and pushes the catalog image by digest and prints the digest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			do.io = streamsOf(cmd)
			return orDefault(runF, runDemo)(cmd.Context(), do)
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "create the sample repository here (default: a temp dir, removed afterwards)")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the temp dir")
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "report format: text, json, markdown")
	return cmd
}

// runDemo runs the whole pipeline on the sample repository and prints the catalog image's digest.
func runDemo(ctx context.Context, o *demoOptions) error {
	res, err := demo.Run(ctx, o.io.out, o.io.err, o.demo)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.io.out, "catalog image: %s\n", res.Digest)
	return err
}
