// Command catalogbot keeps an OLM file-based catalog repository healthy: it validates, renders, checks
// images, builds and publishes catalogs, and runs the same pipeline for pull requests from the CLI, a
// GitHub Action or a webhook-driven GitHub App.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/initgc"
	"github.com/catalogbot/catalogbot/report"
)

// init gives the garbage collector back: package main's initialiser runs after every other package's,
// which ran without collections (internal/initgc). Here rather than in main, so that a process that never
// runs main (a test binary of this package) collects too.
func init() { initgc.Restore() }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs catalogbot with the command line args (without the program name) and returns its exit code,
// by report.Status.ExitCode, the one exit-code map of every verb: 0 ok, 1 the catalog or change is wrong,
// 2 usage or repository configuration, 3 infrastructure or internal failure.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	started := false
	markStarted(root, &started)
	err := root.ExecuteContext(ctx)
	if err != nil && !started {
		// cobra rejected the command line before any verb ran: an unknown verb or flag, a bad flag value,
		// a missing required flag, wrong arguments, or a PreRunE check (e.g. -o).
		err = diag.UsageError(fmt.Errorf("%w (see catalogbot help)", err))
	}
	return exitCode(stderr, err)
}

// markStarted wraps the RunE of cmd and its subcommands so that *started tells whether a verb ran.
func markStarted(cmd *cobra.Command, started *bool) {
	if f := cmd.RunE; f != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			*started = true
			return f(c, args)
		}
	}
	for _, sub := range cmd.Commands() {
		markStarted(sub, started)
	}
}

// errSilentExit carries an exit code for a command that already printed its result (e.g. a report of an
// invalid catalog): main prints nothing more.
type errSilentExit struct{ code int }

func (e errSilentExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	var silent errSilentExit
	if errors.As(err, &silent) {
		return silent.code
	}
	fmt.Fprintf(stderr, "catalogbot: %v\n", err)
	var invalid *config.InvalidError
	if errors.As(err, &invalid) {
		fmt.Fprint(stderr, invalid.Detail())
	}
	if diag.CategoryOf(err) == diag.Infra {
		fmt.Fprintln(stderr, "catalogbot: this is an infrastructure failure, not a problem in your catalog; retry, or check the registry/GitHub/cluster it names")
	}
	return report.ExitCodeOf(err)
}
