// Command catalogbot keeps an OLM file-based catalog repository healthy: it validates, renders, checks
// images, builds and publishes catalogs, and runs the same pipeline for pull requests from the CLI, a
// GitHub Action or a webhook-driven GitHub App.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/catalogbot/catalogbot/internal/diag"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	os.Exit(exitCode(err))
}

// errSilentExit carries an exit code for a command that already printed its result (e.g. a report of an
// invalid catalog): main prints nothing more.
type errSilentExit struct{ code int }

func (e errSilentExit) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var silent errSilentExit
	if errors.As(err, &silent) {
		return silent.code
	}
	cat := diag.CategoryOf(err)
	fmt.Fprintf(os.Stderr, "catalogbot: %v\n", err)
	if cat == diag.Infra {
		fmt.Fprintln(os.Stderr, "catalogbot: this is an infrastructure failure, not a problem in your catalog; retry, or check the registry/GitHub/cluster it names")
	}
	return cat.ExitCode()
}
