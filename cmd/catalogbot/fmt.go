package main

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/gitrepo"
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

A package whose files are all in one directory keeps that directory, whatever its name (upstream's
catalogs/v4.20/konflux/ holds package konflux-operator).

Without DIR, in a repository whose ` + config.ConfigFile + ` lists catalogs:, every catalog is formatted (its
own files only: ` + config.ConfigFile + `, config.yaml and the templates are not catalog files); otherwise the
catalog.dir of ` + config.ConfigFile + ` when it exists, else the working directory.

fmt refuses to rewrite a directory that also holds files that are not catalog blobs (ignored by
.indexignore, for example): move them out of the catalog directory first.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir = streamsOf(cmd), optionalArg(args)
			return orDefault(runF, runFmt)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", "", "json or yaml (default: each package keeps the format of its files)")
	cmd.Flags().BoolVar(&o.check, "check", false, "only list files that are not formatted (exit 1 if any)")
	return cmd
}

// runFmt rewrites the catalog (each catalog of a template-driven repository when no DIR is given) in
// opm's canonical form, or with check lists the files that are not.
func runFmt(ctx context.Context, o *fmtOptions) error {
	dirs := []string{o.dir}
	if o.dir == "" {
		var err error
		if dirs, err = fmtDirs(ctx); err != nil {
			return err
		}
	}
	changed := 0
	for _, dir := range dirs {
		n, err := fmtCatalog(ctx, o, dir, o.dir == "" && len(dirs) > 1)
		if err != nil {
			return err
		}
		changed += n
	}
	if o.check && changed > 0 {
		cmd := "catalogbot fmt"
		if o.dir != "" {
			cmd += " " + o.dir
		}
		fmt.Fprintf(o.io.err, "catalogbot: %d files are not formatted; run %s\n", changed, cmd)
		return errSilentExit{code: 1}
	}
	return nil
}

// fmtDirs are the catalog directories of fmt without DIR: every configured catalog of a template-driven
// repository (relative to the working directory), else the default catalog directory.
func fmtDirs(ctx context.Context) ([]string, error) {
	top, err := gitrepo.TopLevel(ctx, ".")
	if err != nil {
		return []string{"."}, nil
	}
	setup, err := resolveRepo(top)
	if err != nil {
		return nil, err
	}
	if !setup.layout.Templates {
		dir, err := setup.catalogDir(ctx, "")
		return []string{dir}, err
	}
	wd, _ := os.Getwd()
	var dirs []string
	for _, c := range setup.layout.Catalogs {
		dir := filepath.Join(top, filepath.FromSlash(c.Dir))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		if rel, err := filepath.Rel(wd, dir); err == nil {
			dir = rel
		}
		dirs = append(dirs, dir)
	}
	return dirs, nil
}

// fmtCatalog formats the catalog in dir, or with check lists its files that are not formatted (prefixed
// with dir when several catalogs are formatted); it returns how many are not.
func fmtCatalog(ctx context.Context, o *fmtOptions, dir string, prefixed bool) (int, error) {
	res, err := catalog.LoadDir(ctx, dir, catalog.LoadOptions{})
	if err != nil {
		return 0, err
	}
	if diag.HasErrors(res.Diagnostics) {
		r := &report.Report{Title: "fmt " + dir, Stages: []report.Stage{{Name: "load", Status: report.Fail, Diagnostics: res.Diagnostics,
			Summary: "the catalog does not load; fix these first"}}}
		if err := report.WriteText(o.io.out, r, report.TextOptions{}); err != nil {
			return 0, err
		}
		return 0, errSilentExit{code: 1}
	}
	tmp, err := os.MkdirTemp("", "catalogbot-fmt-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	want := filepath.Join(tmp, "catalog")
	kept, err := formattedTree(tmp, want, dir, res.Catalog, o.format)
	if err != nil {
		return 0, err
	}
	if err := keepPackageDirs(want, res.Catalog); err != nil {
		return 0, err
	}
	changed, extra, err := compareTrees(want, dir, res.Files)
	if err != nil {
		return 0, err
	}
	if o.check {
		for _, f := range changed {
			if prefixed { // several catalogs: say whose file it is
				f = filepath.ToSlash(filepath.Join(dir, f))
			}
			fmt.Fprintln(o.io.out, f)
		}
		return len(changed), nil
	}
	if len(extra) > 0 {
		return 0, diag.UsageError(fmt.Errorf("%s holds files that are not catalog blobs (%s): move them out of the catalog directory before formatting", dir, extra[0]))
	}
	if len(changed) == 0 {
		return 0, nil
	}
	if kept == "" {
		return 0, errMixedFormats(dir)
	}
	files, err := filetree.Read(want)
	if err != nil {
		return 0, err
	}
	err = filetree.ReplaceDir(dir, func(tmp string) error {
		for name, data := range files {
			p := filepath.Join(tmp, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := filetree.WriteFileBytes(p, 0o644, data); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("formatting %s: %w", dir, err)
	}
	fmt.Fprintf(o.io.err, "catalogbot: formatted %d files in %s\n", len(changed), dir)
	return 0, nil
}

// keepPackageDirs moves, in the formatted tree want, each package's directory to the one directory its
// files are in now when that is not the package's name and no other package is written there.
func keepPackageDirs(want string, c *catalog.Catalog) error {
	dirs := packageDirs(c)
	for _, pkg := range slices.Sorted(maps.Keys(dirs)) {
		dir := dirs[pkg]
		if dir == "" || dir == pkg {
			continue
		}
		if _, err := os.Lstat(filepath.Join(want, dir)); err == nil {
			continue // another package's directory
		}
		if err := os.Rename(filepath.Join(want, pkg), filepath.Join(want, dir)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
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

// packageDirs is, per package, the one top-level directory all its blobs' files are in ("" when they
// are spread or at the top).
func packageDirs(c *catalog.Catalog) map[string]string {
	out := map[string]string{}
	for pkg, pos := range c.Blobs() {
		if pkg == "" || pos.File == "" {
			continue
		}
		dir, _, nested := strings.Cut(pos.File, "/")
		if !nested {
			dir = ""
		}
		if prev, ok := out[pkg]; ok && prev != dir {
			dir = ""
		}
		out[pkg] = dir
	}
	return out
}
