package main

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/report"
)

// fmtOptions are what fmt's command line says.
type fmtOptions struct {
	io     streams
	dir    string
	format string
	check  bool
}

func newFmtCmd(runF runner[fmtOptions]) *cobra.Command {
	o := &fmtOptions{}
	cmd := &cobra.Command{
		Use:   "fmt [DIR]",
		Short: "Rewrite a file-based catalog in opm's canonical form, one directory per package",
		Long: `fmt loads the catalog in DIR and rewrites it exactly as opm render would print it (same blob order,
key order, indentation and number forms), one <package>/catalog.json (or .yaml) per package. Each package
keeps the format of the file holding its olm.package blob unless --format says otherwise. The rewrite
is atomic. With --check nothing is written: it lists the files that are not formatted and exits 1.

fmt refuses to rewrite a directory that also holds files that are not catalog blobs (ignored by
.indexignore, for example): move them out of the catalog directory first.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir = streamsOf(cmd), cmp.Or(optionalArg(args), ".")
			return orDefault(runF, runFmt)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "", "json or yaml (default: each package keeps the format of its files)")
	cmd.Flags().BoolVar(&o.check, "check", false, "only list files that are not formatted (exit 1 if any)")
	return cmd
}

// runFmt rewrites the catalog in opm's canonical form, or with check lists the files that are not.
func runFmt(ctx context.Context, o *fmtOptions) error {
	dir := o.dir
	res, err := catalog.LoadDir(ctx, dir, catalog.LoadOptions{})
	if err != nil {
		return err
	}
	if diag.HasErrors(res.Diagnostics) {
		r := &report.Report{Title: "fmt " + dir, Stages: []report.Stage{{Name: "load", Status: report.Fail, Diagnostics: res.Diagnostics,
			Summary: "the catalog does not load; fix these first"}}}
		if err := report.WriteText(o.io.out, r, report.TextOptions{}); err != nil {
			return err
		}
		return errSilentExit{code: 1}
	}
	tmp, err := os.MkdirTemp("", "catalogbot-fmt-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	want := filepath.Join(tmp, "catalog")
	kept, err := formattedTree(tmp, want, dir, res.Catalog, o.format)
	if err != nil {
		return err
	}
	changed, extra, err := compareTrees(want, dir, res.Files)
	if err != nil {
		return err
	}
	if o.check {
		for _, f := range changed {
			fmt.Fprintln(o.io.out, f)
		}
		if len(changed) > 0 {
			fmt.Fprintf(o.io.err, "catalogbot: %d files are not formatted; run catalogbot fmt %s\n", len(changed), dir)
			return errSilentExit{code: 1}
		}
		return nil
	}
	if len(extra) > 0 {
		return diag.UsageError(fmt.Errorf("%s holds files that are not catalog blobs (%s): move them out of the catalog directory before formatting", dir, extra[0]))
	}
	if len(changed) == 0 {
		return nil
	}
	if kept == "" {
		return errMixedFormats(dir)
	}
	if err := catalog.WriteDir(dir, res.Catalog, kept); err != nil {
		return err
	}
	fmt.Fprintf(o.io.err, "catalogbot: formatted %d files\n", len(changed))
	return nil
}

// compareTrees lists the files that differ between the formatted tree and the catalog (added, changed or
// removed by formatting), and the files of the catalog directory that are not catalog files at all.
func compareTrees(want, have string, catalogFiles []string) (changed, extra []string, err error) {
	formatted, err := filetree.Read(want)
	if err != nil {
		return nil, nil, err
	}
	current := map[string][]byte{}
	for _, f := range catalogFiles {
		if current[f], err = os.ReadFile(filepath.Join(have, filepath.FromSlash(f))); err != nil {
			return nil, nil, err
		}
	}
	for _, c := range filetree.Diff(current, formatted) {
		changed = append(changed, c.Path)
	}
	err = filepath.WalkDir(have, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(have, p)
		if _, ok := current[filepath.ToSlash(rel)]; err == nil && !ok {
			extra = append(extra, filepath.ToSlash(rel))
		}
		return err
	})
	return changed, extra, err
}
