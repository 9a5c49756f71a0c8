package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is catalogbot's version: set with -ldflags "-X main.version=v1.2.3", else from build info.
var version = func() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}()

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print catalogbot's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "catalogbot", version)
			return err
		},
	}
}
