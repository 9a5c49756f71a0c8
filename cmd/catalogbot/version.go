package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// ldflagsVersion is set at release builds: -ldflags "-X main.ldflagsVersion=v1.2.3".
var ldflagsVersion string

// version is catalogbot's version (also SARIF's driver version): the -ldflags version, else the module
// version of `go install ...@v1.2.3`, else the VCS revision the binary was built from.
var version = func() string {
	bi, _ := debug.ReadBuildInfo()
	return versionOf(ldflagsVersion, bi)
}()

// versionOf picks the version: the -ldflags one, the module's (not "(devel)"), then "devel-<revision>"
// with "-dirty" for a modified work tree, then "devel".
func versionOf(ldflags string, bi *debug.BuildInfo) string {
	if ldflags != "" {
		return ldflags
	}
	if bi == nil {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	v := "devel-" + rev[:min(12, len(rev))]
	if dirty {
		v += "-dirty"
	}
	return v
}

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
