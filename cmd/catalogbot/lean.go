//go:build !full && !tools

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/diag"
)

// The lean build (what `go install ./...` and the pre-commit hook install) links only the verbs that work
// on a catalog directory: version, validate, fmt, render, render-template, bump, check-images. The verbs
// below need client-go and kind (smoke, and the pipeline behind pr, action, build, publish and demo) or the bot's
// GitHub, SQL and metrics libraries (serve); linking them costs every run about 25-30 MB of start-up RSS
// (their package initialisers run before main, whatever the verb), a third of what validate needs on a real
// catalog. Here each of them runs the full build, `catalogbot-full` beside this executable or on PATH, with
// the same arguments; without one it says how to get it.

const fullBinary = "catalogbot-full"

// The constructors take the full build's run function (always nil here: root.go passes nil) so root.go
// is the same in both builds.

func newServeCmd(any) *cobra.Command { return fullOnly("serve", "Run the GitHub App") }
func newSmokeCmd(any) *cobra.Command {
	return fullOnly("smoke", "Install operators from a catalog image in a kind cluster with OLM")
}
func newPRCmd(any) *cobra.Command {
	return fullOnly("pr", "Run the pull-request pipeline on a range of a local catalog repository")
}
func newActionCmd(any) *cobra.Command {
	return fullOnly("action", "Run the pipeline for a GitHub Actions workflow's event")
}
func newBuildCmd(any) *cobra.Command {
	return fullOnly("build", "Build the catalog image from a file-based catalog without a daemon")
}
func newPublishCmd(any) *cobra.Command {
	return fullOnly("publish", "Validate, build and push the catalog image")
}
func newDemoCmd(any) *cobra.Command {
	return fullOnly("demo", "Run the whole pipeline on a sample catalog repository")
}

// fullOnly is a verb of the full build: it passes its arguments through unparsed to catalogbot-full.
func fullOnly(verb, short string) *cobra.Command {
	return &cobra.Command{
		Use:                verb,
		Short:              short + " (full build: runs " + fullBinary + ")",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := findFull()
			if err != nil {
				return diag.UsageError(fmt.Errorf("%s is a verb of the full build and this catalogbot is the lean one "+
					"(validate, fmt, render, render-template, bump, check-images, version: what go install ./... and the pre-commit hook install): "+
					"put the full build beside it or on PATH as %s (go build -tags full -o %s ./cmd/catalogbot), "+
					"or install the full build as catalogbot (go install -tags full ./cmd/catalogbot, or a release binary): %w",
					verb, fullBinary, fullBinary, err))
			}
			return runFull(cmd, bin, append([]string{verb}, args...))
		},
	}
}

// findFull returns catalogbot-full beside the running executable, else on PATH.
func findFull() (string, error) {
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), fullBinary); isExecutable(p) {
			return p, nil
		}
	}
	return exec.LookPath(fullBinary)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// runFull runs the full build with args and this process's standard streams; its exit code becomes ours.
// An interrupt reaches it through the terminal's process group (or, when ctx ends, as os.Interrupt).
func runFull(cmd *cobra.Command, bin string, args []string) error {
	c := exec.CommandContext(cmd.Context(), bin, args...)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	err := c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() >= 0 {
		return errSilentExit{code: exit.ExitCode()}
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", bin, err)
	}
	return nil
}
