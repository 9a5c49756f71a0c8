package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/report"
)

// readRefsConfig reads and strictly parses a references config; its problems are a failed stage.
func readRefsConfig(path string) (*render.Config, []diag.Diagnostic, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, diag.UsageError(fmt.Errorf("read references config: %w", err))
	}
	cfg, ds := render.ParseConfig(data, path)
	return cfg, ds, nil
}

// renderOptions are what render's command line says.
type renderOptions struct {
	io      streams
	out     outputFlags
	cfgPath string
	dir     string
	opts    render.Options
	check   bool
	repo    repoFlags
}

func newRenderCmd(runF runner[renderOptions]) *cobra.Command {
	o := &renderOptions{}
	cmd := &cobra.Command{
		Use:   "render",
		Short: "Render the catalog from a references config (catalog.yaml), deterministically; --check fails on drift",
		Long: `render reads a references config (name, repo, tag, references[{name, image}]) and writes
<output>/<name>/<reference>/index.yaml for every reference, byte for byte as opm render prints the
reference's package, without a daemon: index images are read through their configs label, bundle images
and ./bundle directories are rendered as opm render does. Unlike the docs' yq + opm render loop, which
keeps every package of an index image, only the package the reference names is kept, and a reference
whose name is none of the image's packages fails (package-not-found). Digest-pinned
references are cached on disk by digest; tags are resolved once per run.

--check renders into a temp dir and fails (exit 1) with a unified diff for every file that differs from
what is committed under <output>/<name>.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.io = streamsOf(cmd)
			return orDefault(runF, runRender)(cmd.Context(), o)
		},
	}
	o.out.add(cmd)
	cmd.Flags().StringVarP(&o.cfgPath, "config", "c", "catalog.yaml", "the references config")
	cmd.Flags().StringVar(&o.dir, "output-dir", ".", "directory the catalog <name>/ is written to (or compared with)")
	cmd.Flags().StringVar(&o.opts.Format, "format", "yaml", "yaml or json")
	cmd.Flags().BoolVar(&o.check, "check", false, "do not write: fail with a diff when the committed catalog differs")
	cmd.Flags().BoolVar(&o.opts.NoCache, "no-cache", false, "do not use the on-disk render cache")
	cmd.Flags().IntVar(&o.opts.Concurrency, "concurrency", 0, "references rendered at once (default 4)")
	o.repo.addRender(cmd)
	return cmd
}

// bumpOptions are what bump's command line says.
type bumpOptions struct {
	io               streams
	cfgPath          string
	reference, image string
}

func newBumpCmd(runF runner[bumpOptions]) *cobra.Command {
	o := &bumpOptions{}
	cmd := &cobra.Command{
		Use:   "bump REFERENCE IMAGE",
		Short: "Point one reference of the references config at a new image, changing only that line",
		Long: `bump edits the references config in place: the image of the named reference becomes IMAGE
(typically a new digest). Only that scalar's bytes change; comments, order, indentation and quoting stay.
The file is rewritten atomically.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.reference, o.image = streamsOf(cmd), args[0], args[1]
			return orDefault(runF, runBump)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.cfgPath, "config", "c", "catalog.yaml", "the references config")
	return cmd
}

// runRender renders the references config (or every template mapping of a template-driven repository),
// or with check compares the render with what is committed.
func runRender(ctx context.Context, o *renderOptions) error {
	setup, err := resolveRepo(o.repo.repo)
	if err != nil {
		return err
	}
	if setup.layout.Templates {
		return runTemplateRender(ctx, o.io, &o.repo, setup, o.check, o.opts, &o.out)
	}
	start := time.Now()
	cfg, ds, err := readRefsConfig(o.cfgPath)
	if err != nil {
		if lerr := templateLayoutWithoutCatalogs(o.repo.repo); lerr != nil {
			return lerr
		}
		return err
	}
	st := report.Stage{Name: render.Check}
	title := "render " + o.cfgPath
	if diag.HasErrors(ds) {
		st.Status, st.Diagnostics, st.Summary = report.Fail, ds, o.cfgPath+" is invalid"
		return o.out.emit(o.io.out, &report.Report{Title: title, Stages: []report.Stage{st}})
	}
	opts := o.opts
	if opts.BaseDir == "" {
		opts.BaseDir = filepath.Dir(o.cfgPath)
	}
	opts.Progress = o.io.err
	if o.check {
		ds, err = render.Drift(ctx, cfg, o.dir, opts)
		st.Summary = fmt.Sprintf("%s and compared with %s", renderedCount(cfg, ds), filepath.Join(o.dir, cfg.Name))
	} else {
		var out *render.Output
		out, ds, err = render.Render(ctx, cfg, opts)
		if err == nil && !diag.HasErrors(ds) {
			err = out.Write(o.dir, cmp.Or(opts.Format, "yaml"))
		}
		st.Summary = fmt.Sprintf("%s into %s", renderedCount(cfg, ds), filepath.Join(o.dir, cfg.Name))
	}
	st.Diagnostics, st.Duration = ds, time.Since(start)
	// a failed render's error decides (its category is the worst of the references' failures)
	if st.Status = report.StatusOf(ds, nil); err != nil {
		st.Status, st.Err = report.StatusOf(nil, err), err.Error()
	}
	return o.out.emit(o.io.out, &report.Report{Title: title, Stages: []report.Stage{st}})
}

// runBump points one reference at a new image, rewriting only that line, atomically.
func runBump(_ context.Context, o *bumpOptions) error {
	data, err := os.ReadFile(o.cfgPath)
	if err != nil {
		return diag.UsageError(fmt.Errorf("read references config: %w", err))
	}
	out, err := render.Bump(data, o.reference, o.image)
	if err != nil {
		return err
	}
	if bytes.Equal(out, data) {
		fmt.Fprintf(o.io.out, "%s: reference %q already points at %s; nothing changed\n", o.cfgPath, o.reference, o.image)
		return nil
	}
	st, err := os.Stat(o.cfgPath)
	if err != nil {
		return err
	}
	if err := filetree.WriteFileBytes(o.cfgPath, st.Mode().Perm(), out); err != nil {
		return err
	}
	printChange(o.io.out, o.cfgPath, data, out)
	return nil
}

// renderedCount says how many of cfg's references rendered: each reference that failed is an error
// diagnostic on its line of the references config.
func renderedCount(cfg *render.Config, ds []diag.Diagnostic) string {
	failed := 0
	for _, d := range ds {
		if d.Severity == diag.Error && d.File == cfg.File {
			failed++
		}
	}
	n := len(cfg.References)
	if failed == 0 {
		return fmt.Sprintf("%d references rendered", n)
	}
	return fmt.Sprintf("%d of %d references rendered (%d failed)", n-failed, n, failed)
}

// printChange prints the lines that differ between old and new as "file:line: -old" and "+new".
func printChange(w io.Writer, file string, old, new []byte) {
	a, b := strings.Split(string(old), "\n"), strings.Split(string(new), "\n")
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			fmt.Fprintf(w, "%s:%d: -%s\n%s:%d: +%s\n", file, i+1, strings.TrimSpace(a[i]), file, i+1, strings.TrimSpace(b[i]))
		}
	}
}
