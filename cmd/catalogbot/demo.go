//go:build full || tools

package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/internal/demo"
)

func newDemoCmd() *cobra.Command {
	var o demo.Options
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the whole pipeline on a sample catalog repository, with an embedded registry (no GitHub, no Docker)",
		Long: `demo creates a catalog repository with two pull requests in a temp dir, starts an embedded OCI
registry seeded with bundle images and a two-platform base image, runs the pull-request pipeline on both
(one is rejected: its author owns nothing and it rewrites a released bundle), merges the one that passes,
then builds and pushes the catalog image by digest and prints the digest.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := demo.Run(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "catalog image: %s\n", res.Digest)
			return err
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "create the sample repository here (default: a temp dir, removed afterwards)")
	cmd.Flags().BoolVar(&o.Keep, "keep", false, "keep the temp dir")
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "report format: text, json, markdown")
	return cmd
}
