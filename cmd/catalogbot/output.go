package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// outputFlags are the report flags every report-producing command shares.
type outputFlags struct {
	format string
	root   string
}

func (o *outputFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "report format: text, json, sarif, github (workflow annotations + text), markdown")
	cmd.Flags().StringVar(&o.root, "path-prefix", "", "prefix for file paths in sarif/github output (the catalog's path in the repository)")
	// an unknown -o is a usage error found before the verb runs, not after its work is done
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if !slices.Contains(report.Formats, o.format) {
			return diag.UsageError(fmt.Errorf("unknown output format %q (want one of %s)", o.format, strings.Join(report.Formats, ", ")))
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// emit renders the report and turns its verdict into the exit code.
func (o *outputFlags) emit(w io.Writer, r *report.Report) error {
	if err := report.Render(w, r, o.format, o.root, version, isTerminal(w)); err != nil {
		return err
	}
	if code := r.ExitCode(); code != 0 {
		return errSilentExit{code: code}
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("NO_COLOR") == ""
}
