package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/catalogbot/catalogbot/pipeline/report"
)

// outputFlags are the report flags every report-producing command shares.
type outputFlags struct {
	format string
	root   string
}

func (o *outputFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "report format: text, json, sarif, github (workflow annotations + text), markdown")
	cmd.Flags().StringVar(&o.root, "path-prefix", "", "prefix for file paths in sarif/github output (the catalog's path in the repository)")
}

// emit renders the report and turns its verdict into the exit code.
func (o *outputFlags) emit(cmd *cobra.Command, r *report.Report) error {
	w := cmd.OutOrStdout()
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
