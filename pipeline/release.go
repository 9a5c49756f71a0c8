package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/release"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// ReleaseOnly reports whether the change is nothing but a release of package pkg: it merges, every path
// it changes is one of pkg's catalog templates (operators/<dir>/catalog-templates/...) or a file of pkg's
// directory in a catalog of the layout, and every package those files name is pkg (blob identity, so a
// blob of another package filed in pkg's directory is not a release of pkg). It says nothing about who
// wrote the change: the front-end decides that (the App's own release pull request, by its record).
func (c *Change) ReleaseOnly(pkg string) bool {
	if !c.onlyPackage(pkg) {
		return false
	}
	dir := c.Rules.Config.Catalogs.PackageDir(pkg)
	templates := path.Join(template.OperatorsDir, dir, template.TemplatesDir) + "/"
	for _, p := range c.changes.paths {
		ok := strings.HasPrefix(p, templates)
		for _, cat := range c.Layout.Catalogs {
			ok = ok || strings.HasPrefix(p, path.Join(path.Clean(cat.Dir), dir)+"/")
		}
		if !ok {
			return false
		}
	}
	return true
}

// onlyPackage reports whether the change merges, changes some paths, no references entry, and only files
// that the layout attributes to package pkg (blob identity).
func (c *Change) onlyPackage(pkg string) bool {
	if c == nil || c.Result == nil || c.changes == nil || c.Attribution == nil || c.Layout == nil || c.Rules == nil || c.Rules.Config == nil {
		return false
	}
	if len(c.changes.paths) == 0 || len(c.changes.refEntries) > 0 || c.changes.refsGlobal || len(c.Attribution.Other) > 0 {
		return false
	}
	for p := range c.Attribution.Packages {
		if p != pkg {
			return false
		}
	}
	return true
}

// ReleasesAdded lists the bundle directories (operators/<package>/<version>) that after has a
// release-config.yaml in and before has not: the bundles a push to the default branch merged, sorted.
func ReleasesAdded(ctx context.Context, repo *gitrepo.Repo, before, after *object.Commit) ([]string, error) {
	paths, err := repo.Changed(ctx, before, after)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, p := range paths {
		parts := strings.Split(p, "/")
		if len(parts) != 4 || parts[0] != template.OperatorsDir || parts[3] != release.ConfigFile {
			continue
		}
		_, had, err := repo.ReadFile(before, p)
		if err != nil {
			return nil, err
		}
		_, has, err := repo.ReadFile(after, p)
		if err != nil {
			return nil, err
		}
		if has && !had {
			dirs = append(dirs, path.Dir(p))
		}
	}
	slices.Sort(dirs)
	return dirs, nil
}

// ReleaseBranchPrefix starts every release branch: catalogbot/release/<package>-<version>.
const ReleaseBranchPrefix = "catalogbot/release/"

// ReleaseNames are what the release of a bundle directory is called, by every front-end: its package and
// version (the names of the directory's parent and of the directory), the branch its commit goes on and
// the title of that commit and of its pull request, as upstream's release pipeline titles its commits.
type ReleaseNames struct{ Package, Version, Branch, Title string }

// ReleaseNamesOf names the release of bundle directory dir (operators/<package>/<version>).
func ReleaseNamesOf(dir string) ReleaseNames {
	pkg, version := path.Base(path.Dir(dir)), path.Base(dir)
	return ReleaseNames{Package: pkg, Version: version, Branch: ReleaseBranchPrefix + pkg + "-" + version,
		Title: fmt.Sprintf("Add %s %s to FBC", pkg, version)}
}

// Release is a bundle directory's release computed at a commit of the default branch.
type Release struct {
	// Files are the edited templates and the rendered catalogs, by repository path.
	Files map[string][]byte
	// Summary says what was added where (Markdown).
	Summary string
}

// Message is the release commit's message: its title, what was added where, the bundle image by digest
// and the pushed commit released from. It is a function of its inputs, so the commit (same files, message
// and time on the same parent) computed again after a restart or in a re-run is the one pushed before.
func (r *Release) Message(n ReleaseNames, image, from string) string {
	return fmt.Sprintf("%s\n\n%s\nBundle image: %s\nReleased-from: %s\n", n.Title, r.Summary, image, from)
}

// Body is the release pull request's body. Names reach Markdown only as code spans (a directory's name
// is a contributor's choice).
func (r *Release) Body(dir, image, from, commit string) string {
	return fmt.Sprintf("Release of %s, merged in %s, by catalogbot.\n\n%s\n\n- bundle image: %s\n- release commit: %s\n",
		report.CodeSpan(dir), from, r.Summary, report.CodeSpan(image), commit)
}

// ReleaseImage names the bundle image of bundle directory dir (operators/<package>/<version>) by
// release.bundleImage of cfg: the reference its image is pushed to and the templates name it by.
func ReleaseImage(cfg *config.Config, dir string) (pkg, version, image string, err error) {
	pkg, version = path.Base(path.Dir(dir)), path.Base(dir)
	if cfg.Release.BundleImage == "" {
		return pkg, version, "", diag.UsageError(fmt.Errorf("release %s: no release.bundleImage in %s", dir, config.ConfigFile))
	}
	image, err = release.Image(cfg.Release.BundleImage, pkg, version)
	return pkg, version, image, err
}

// ComputeRelease applies the release-config.yaml of bundle directory dir to its package's templates in
// work, a throw-away checkout of a trusted commit (the default branch's) under cfg and layout, and renders
// the catalogs the package's ci.yaml maps them to: the bundle from its directory, every other one from the
// committed catalogs of work, then its registry. A release the release-config.yaml cannot make is refused
// (diag.Invalid, naming the file and line); nothing outside work is written (through an os.Root).
func ComputeRelease(ctx context.Context, work string, cfg *config.Config, layout *Layout, dir string, remoteOpts []remote.Option) (*Release, error) {
	r, err := release.Load(ctx, work, dir, cfg.Release.BundleImage)
	if err != nil {
		return nil, diag.InvalidError(err)
	}
	if ds := r.Validate(); len(ds) > 0 {
		return nil, diag.InvalidError(fmt.Errorf("release %s refused: %s", dir, ds[0].String()))
	}
	changes, err := r.Apply()
	if err != nil {
		return nil, err
	}
	tcats := template.CatalogsOf(layout.Catalogs)
	jobs, _, err := r.Jobs(tcats)
	if err != nil {
		return nil, diag.InvalidError(err)
	}
	store := template.NewStore("")
	if err := template.SeedFromCommitted(ctx, store, work, tcats, jobs); err != nil {
		return nil, fmt.Errorf("seeding the bundle cache for %s: %w", dir, err)
	}
	root, err := os.OpenRoot(work)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := &Release{Files: map[string][]byte{}}
	for _, c := range changes {
		if err := root.WriteFile(filepath.FromSlash(c.File), c.After, 0o644); err != nil {
			return nil, fmt.Errorf("writing %s: %w", c.File, err)
		}
		out.Files[c.File] = c.After
	}
	pull, err := render.NewBundleImages(render.Options{RemoteOptions: remoteOpts, AllowedRegistries: cfg.Images.AllowedRegistries})
	if err != nil {
		return nil, err
	}
	results := r.Render(ctx, jobs, &template.Images{Store: store, Pull: pull, SeededTags: true}, 0, nil)
	if err := template.InfraErr(results); err != nil {
		return nil, err
	}
	for _, res := range results {
		if res.Err != nil {
			return nil, diag.InvalidError(fmt.Errorf("release %s: rendering %s: %w", dir, res.Job.Output(), res.Err))
		}
		out.Files[res.Job.Output()] = res.Data
	}
	out.Summary = fmt.Sprintf("%s (%s) added to %s as %s; %s rendered.", report.CodeSpan(r.Bundle.Name), report.Text(r.Version),
		template.Plural(len(changes), "template"), report.CodeSpan(r.Bundle.Image), template.Plural(len(results), "catalog"))
	return out, nil
}
