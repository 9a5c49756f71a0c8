package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/release"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// releaseOptions are what release's command line says.
type releaseOptions struct {
	io            streams
	dir           string
	bundleImage   string
	templatesOnly bool
	push          bool
	pushTimeout   time.Duration
	repo          repoFlags
	out           outputFlags
}

func newReleaseCmd(runF runner[releaseOptions]) *cobra.Command {
	o := &releaseOptions{}
	cmd := &cobra.Command{
		Use:   "release operators/<package>/<version>",
		Short: "Release a bundle directory into its package's templates (its release-config.yaml), then render the catalogs",
		Long: `release applies the bundle directory's release-config.yaml to its package's catalog templates, as the
FBC auto-release of community-operators-prod does: for each catalog_templates entry, the channel entries
(replaces, skips, skipRange) and the olm.bundle image go into a basic template, or the image into a semver
template's channel lists. Lines are only added: everything written in the templates stays. Then the
catalogs the package's ci.yaml maps those templates to are rendered (--templates-only stops before).

The bundle is named by ` + "`release.bundleImage`" + ` of ` + config.ConfigFile + ` (or --bundle-image), with {package}
and {version}; it is rendered from its directory, so nothing is pulled for it. The other bundles come from
the catalogs HEAD commits (or --seed-from), as render's. A release-config.yaml naming an unmapped or missing
template, a channel a semver template cannot have, a replaces target no channel has, or a bundle the
template holds already is refused with its file and line, before anything is written.

--push first builds the bundle image from the directory (manifests/, metadata/ and tests/scorecard/ in one
reproducible layer, the annotations as labels, as opm's and operator-sdk's bundle Dockerfiles build it) and
pushes it by digest, then moves its tag; the templates are written only once the push succeeded, and a
registry that fails or does not answer within --push-timeout leaves them as they were (exit 3).
Credentials come from the docker config. Docs: docs/release.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.io, o.dir = streamsOf(cmd), args[0]
			return orDefault(runF, runRelease)(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.repo.repo, "repo", ".", "repository root; the bundle directory is relative to it")
	cmd.Flags().StringVar(&o.bundleImage, "bundle-image", "", "the bundle image pattern, with {package} and {version} (default: release.bundleImage of "+config.ConfigFile+")")
	cmd.Flags().BoolVar(&o.templatesOnly, "templates-only", false, "edit the templates, render nothing")
	cmd.Flags().BoolVar(&o.push, "push", false, "build the bundle image from the directory and push it (by digest, then the tag) before the templates name it")
	cmd.Flags().DurationVar(&o.pushTimeout, "push-timeout", bundleimage.DefaultTimeout, "give up the push after this long, retries included")
	o.repo.addSeed(cmd)
	o.out.add(cmd)
	return cmd
}

func runRelease(ctx context.Context, o *releaseOptions) error {
	start := time.Now()
	setup, err := resolveRepo(o.repo.repo)
	if err != nil {
		return err
	}
	pattern := o.bundleImage
	if pattern == "" {
		pattern = setup.cfg.Release.BundleImage
	}
	if pattern == "" {
		return diag.UsageError(fmt.Errorf("release: no bundle image pattern: set release.bundleImage in %s (such as registry/prefix/{package}:{version}) or pass --bundle-image", config.ConfigFile))
	}
	r, err := release.Load(ctx, o.repo.repo, o.dir, pattern)
	if err != nil {
		return err
	}
	st := report.Stage{Name: release.Check, Diagnostics: r.Validate(), Status: report.Pass}
	rep := &report.Report{Title: "release " + r.Dir, Stages: []report.Stage{st}}
	if len(st.Diagnostics) > 0 {
		rep.Stages[0].Status, rep.Stages[0].Summary = report.Fail, fmt.Sprintf("%s %s refused; nothing was written", r.Package, r.Version)
		return o.out.emit(o.io.out, rep)
	}
	changes, err := r.Apply()
	if err != nil {
		return err
	}
	pushed := ""
	if o.push {
		d, err := bundleimage.Push(ctx, r.Dir, r.Bundle.Image, bundleimage.WithRepository(o.repo.repo), bundleimage.WithTimeout(o.pushTimeout))
		if err != nil {
			return fmt.Errorf("release %s: nothing was written: %w", r.Dir, err)
		}
		pushed = fmt.Sprintf(" (pushed %s)", d)
	}
	for _, c := range changes {
		if err := filetree.WriteFileBytes(filepath.Join(o.repo.repo, filepath.FromSlash(c.File)), 0o644, c.After); err != nil {
			return fmt.Errorf("writing %s: %w", c.File, err)
		}
	}
	rep.Stages[0].Summary = fmt.Sprintf("%s (%s) added to %s as %s%s", r.Bundle.Name, r.Version, template.Plural(len(changes), "template"), r.Bundle.Image, pushed)
	rep.Stages[0].Duration = time.Since(start)
	if !o.templatesOnly {
		rep.Stages = append(rep.Stages, renderRelease(ctx, o, setup, r))
	}
	return o.out.emit(o.io.out, rep)
}

// renderRelease renders the released templates into the catalogs their mappings name, the bundle from its
// directory, the others from the cache seeded from the committed catalogs (rendered as committed).
func renderRelease(ctx context.Context, o *releaseOptions, setup *repoSetup, r *release.Release) report.Stage {
	jobs, warnings, err := r.Jobs(template.CatalogsOf(setup.layout.Catalogs))
	if err != nil {
		return report.Stage{Name: template.Check, Status: report.StatusOf(nil, err), Err: err.Error()}
	}
	st := renderAndWrite(ctx, o.repo, setup, jobs, warnings, func(src template.Source) []template.Result {
		return r.Render(ctx, jobs, src, render.DefaultConcurrency, o.io.err)
	})
	st.Summary = fmt.Sprintf("%s rendered into %s", template.Plural(len(jobs), "template mapping"), r.Package)
	return st
}

// addSeed adds the flags of renderAndWrite's bundle source (release, promote).
func (f *repoFlags) addSeed(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.offline, "offline", false, "pull nothing; the other bundles come from the cache only")
	cmd.Flags().StringVar(&f.seedFrom, "seed-from", "", "a trusted checkout (the base branch) whose committed catalogs seed the bundle cache (default: the catalogs HEAD commits)")
	cmd.Flags().StringVar(&f.cacheDir, "template-cache-dir", "", "where pulled bundle renders are kept by digest ($XDG_CACHE_HOME/catalogbot/templates)")
}

// renderAndWrite is the render stage of a verb that edits the repository (release, promote): it renders
// jobs with run, given the source of their bundles (the cache seeded from the committed catalogs of
// HEAD or --seed-from, rendered as committed, then their registry unless --offline), and writes the
// catalogs. warnings are the planning's, reported with the render's diagnostics.
func renderAndWrite(ctx context.Context, f repoFlags, setup *repoSetup, jobs []template.Job, warnings []string, run func(template.Source) []template.Result) report.Stage {
	start := time.Now()
	st := report.Stage{Name: template.Check}
	fail := func(err error) report.Stage {
		st.Status, st.Err, st.Duration = report.StatusOf(nil, err), err.Error(), time.Since(start)
		return st
	}
	tcats := template.CatalogsOf(setup.layout.Catalogs)
	store := templateStore(f.cacheDir, false)
	var err error
	if f.seedFrom != "" {
		err = template.SeedFromCommitted(ctx, store, f.seedFrom, tcats, jobs)
	} else {
		_, err = seedFromHEAD(ctx, store, f.repo, setup.layout, jobs)
	}
	if err != nil {
		return fail(err)
	}
	images := &template.Images{Store: store, Offline: f.offline, SeededTags: true}
	if !f.offline {
		if images.Pull, err = render.NewBundleImages(render.Options{}); err != nil {
			return fail(err)
		}
	}
	results := run(images)
	st.Diagnostics = template.GroupDrift(template.Diagnostics(f.repo, results, false), tcats)
	for _, w := range warnings {
		st.Diagnostics = append(st.Diagnostics, diag.Diagnostic{Severity: diag.Warning, Check: template.Check, Rule: "template-unknown-catalog", Message: w})
	}
	st.Diagnostics = diag.Sort(st.Diagnostics)
	ierr := template.InfraErr(results)
	if ierr == nil {
		ierr = template.WriteResults(f.repo, results)
	}
	st.Status, st.Duration = report.StatusOf(st.Diagnostics, ierr), time.Since(start)
	if ierr != nil {
		st.Err = ierr.Error()
	}
	return st
}
