package main

import (
	"bytes"
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

func newRenderCmd() *cobra.Command {
	var (
		out     outputFlags
		cfgPath string
		dir     string
		opts    render.Options
		check   bool
		repo    repoFlags
	)
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
			if _, cats, err := multiCatalogConfig(repo.repo); err != nil || cats != nil {
				if err != nil {
					return err
				}
				return runTemplateRender(cmd, &repo, cats, check, opts, &out)
			}
			start := time.Now()
			cfg, ds, err := readRefsConfig(cfgPath)
			if err != nil {
				return err
			}
			st := report.Stage{Name: render.Check}
			if diag.HasErrors(ds) {
				st.Status, st.Diagnostics, st.Summary = report.Fail, ds, cfgPath+" is invalid"
				return out.emit(cmd, &report.Report{Title: "render " + cfgPath, Stages: []report.Stage{st}})
			}
			if opts.BaseDir == "" {
				opts.BaseDir = filepath.Dir(cfgPath)
			}
			opts.Progress = cmd.ErrOrStderr()
			if check {
				ds, err = render.Drift(cmd.Context(), cfg, dir, opts)
				st.Summary = fmt.Sprintf("%s and compared with %s", renderedCount(cfg, ds), filepath.Join(dir, cfg.Name))
			} else {
				var o *render.Output
				o, ds, err = render.Render(cmd.Context(), cfg, opts)
				if err == nil && !diag.HasErrors(ds) {
					format := opts.Format
					if format == "" {
						format = "yaml"
					}
					err = o.Write(dir, format)
				}
				st.Summary = fmt.Sprintf("%s into %s", renderedCount(cfg, ds), filepath.Join(dir, cfg.Name))
			}
			st.Diagnostics, st.Duration = ds, time.Since(start)
			// a failed render's error decides (its category is the worst of the references' failures)
			if st.Status = report.StatusOf(ds, nil); err != nil {
				st.Status, st.Err = report.StatusOf(nil, err), err.Error()
			}
			return out.emit(cmd, &report.Report{Title: "render " + cfgPath, Stages: []report.Stage{st}})
		},
	}
	out.add(cmd)
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "catalog.yaml", "the references config")
	cmd.Flags().StringVar(&dir, "output-dir", ".", "directory the catalog <name>/ is written to (or compared with)")
	cmd.Flags().StringVar(&opts.Format, "format", "yaml", "yaml or json")
	cmd.Flags().BoolVar(&check, "check", false, "do not write: fail with a diff when the committed catalog differs")
	cmd.Flags().BoolVar(&opts.NoCache, "no-cache", false, "do not use the on-disk render cache")
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 0, "references rendered at once (default 4)")
	repo.addRender(cmd)
	return cmd
}

func newBumpCmd() *cobra.Command {
	var cfgPath string
	cmd := &cobra.Command{
		Use:   "bump REFERENCE IMAGE",
		Short: "Point one reference of the references config at a new image, changing only that line",
		Long: `bump edits the references config in place: the image of the named reference becomes IMAGE
(typically a new digest). Only that scalar's bytes change; comments, order, indentation and quoting stay.
The file is rewritten atomically.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(cfgPath)
			if err != nil {
				return diag.UsageError(fmt.Errorf("read references config: %w", err))
			}
			out, err := render.Bump(data, args[0], args[1])
			if err != nil {
				return err
			}
			if bytes.Equal(out, data) {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: reference %q already points at %s; nothing changed\n", cfgPath, args[0], args[1])
				return nil
			}
			st, err := os.Stat(cfgPath)
			if err != nil {
				return err
			}
			if err := filetree.WriteFileBytes(cfgPath, st.Mode().Perm(), out); err != nil {
				return err
			}
			printChange(cmd.OutOrStdout(), cfgPath, data, out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&cfgPath, "config", "c", "catalog.yaml", "the references config")
	return cmd
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
