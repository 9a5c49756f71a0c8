package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/policy"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// policy runs the rules the base configuration's policy section enables (checks/policy) on the packages
// the change touched, in every catalog holding one; dependencies are looked up in the whole head catalog.
// Its steps, in order: the catalogs to check, the findings about the change as a whole (its packages,
// mappings, ci.yaml and release-config.yaml files, bundle directories), then each catalog's packages
// against the base's as a baseline, then the summary.
func (s *state) policy(ctx context.Context) report.Stage {
	sev := policy.SeveritiesOf(s.cfg.Policy) // Run adds the stage only when some rule is enabled
	targets, a, err := s.policyTargets(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	ds, err := s.policyChangeFindings(a, sev)
	if err != nil {
		return stageFromErr(err)
	}
	if len(targets) == 0 && len(ds) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no catalog package changed"}
	}
	objects, err := s.policyImageObjects()
	if err != nil {
		return stageFromErr(err)
	}
	run := &policyRun{s: s, sev: sev, objects: objects, ofc: policy.NewOFCache(policy.OFCacheDir()), ds: ds}
	for _, t := range targets {
		if err := run.check(ctx, t); err != nil {
			return stageFromErr(err)
		}
	}
	return run.stage(a, len(targets))
}

// policyTarget is one catalog holding a touched package: its touched packages at the head and at the
// base.
type policyTarget struct {
	name, dir, migrate, kube string
	head, base               *catalog.Catalog
	pkgs                     map[string]bool
}

// policyTargets are the catalogs holding a touched package (catalogPairs), none when the change touches
// no package, and what the change touches.
func (s *state) policyTargets(ctx context.Context) ([]policyTarget, *affected, error) {
	pairs, a, err := s.catalogPairs(ctx)
	if err != nil {
		return nil, nil, err
	}
	pkgs := map[string]bool{}
	for _, p := range a.packages {
		pkgs[p] = true
	}
	var targets []policyTarget
	for _, p := range pairs {
		if len(pkgs) == 0 {
			break // no package to check
		}
		targets = append(targets, policyTarget{a.catalogName(p.cat), path.Clean(p.cat.Dir), p.cat.MigrateLevel, p.cat.Kubernetes, p.head, p.base, pkgs})
	}
	return targets, a, nil
}

// policyChangeFindings are the findings about the change as a whole: its packages, template mappings and
// catalog directories (policy.CheckChange), its ci.yaml and release-config.yaml files at the head, and
// the bundle directories it touched.
func (s *state) policyChangeFindings(a *affected, sev policy.Severities) ([]diag.Diagnostic, error) {
	ch := policy.Change{Paths: s.changes.paths, Packages: a.packages}
	for _, j := range a.jobs {
		ch.Mappings = append(ch.Mappings, policy.Mapping{Package: j.Package, Template: j.Template, Catalog: j.Catalog.Name, File: j.CI, Line: j.CILine})
	}
	for _, c := range a.catalogs {
		ch.CatalogDirs = append(ch.CatalogDirs, c.Dir)
	}
	ds := policy.CheckChange(ch, sev)
	fds, err := s.policyFileFindings(sev)
	if err != nil {
		return nil, err
	}
	ds = append(ds, fds...)
	bundleDirs, err := s.changedBundleDirs()
	if err != nil {
		return nil, err
	}
	for _, bd := range bundleDirs {
		ds = append(ds, policy.CheckBundleDir(bd, sev)...)
	}
	return ds, nil
}

// policyFileFindings checks the changed operators/<package>/ci.yaml files and the changed
// operators/<package>/<version>/release-config.yaml files (with their package's ci.yaml) at the head; a
// file the change removed is not checked.
func (s *state) policyFileFindings(sev policy.Severities) ([]diag.Diagnostic, error) {
	var ds []diag.Diagnostic
	for _, p := range s.changes.paths {
		parts := strings.Split(p, "/")
		ci := len(parts) == 3 && parts[0] == "operators" && parts[2] == config.CIFile
		release := len(parts) == 4 && parts[0] == "operators" && parts[3] == "release-config.yaml"
		if !ci && !release {
			continue
		}
		data, ok, err := s.in.Repo.ReadFile(s.head, p)
		if err != nil {
			return nil, err
		}
		switch {
		case !ok:
		case ci:
			ds = append(ds, policy.CheckCI(p, data, sev)...)
		default:
			ciData, _, err := s.in.Repo.ReadFile(s.head, path.Join("operators", parts[1], config.CIFile))
			if err != nil {
				return nil, err
			}
			ds = append(ds, policy.CheckReleaseConfig(p, data, ciData, sev)...)
		}
	}
	return ds, nil
}

// policyImageObjects is imageObjects when the policy reads bundle images (policy.bundleImages), else nil.
func (s *state) policyImageObjects() (policy.ImageObjects, error) {
	if !s.cfg.Policy.BundleImages {
		return nil, nil
	}
	return s.imageObjects()
}

// policyRun is the policy stage's pass over its catalogs: the settings every catalog is checked with, and
// what the catalogs' findings and counts add up to.
type policyRun struct {
	s       *state
	sev     policy.Severities
	objects policy.ImageObjects
	ofc     *policy.OFCache // both sides of every catalog, and later checks

	ds                                            []diag.Diagnostic
	truncated                                     []diag.Truncation
	checked, bundles, v1ok, v1checked, fromImages int
	baseline                                      int // findings the base already had
}

// check runs the rules on t's touched packages at the head and, as a baseline, at the base, and adds what
// the change adds (limited per rule; t.head names its files from the repository's top) and the counts of
// the head's run.
func (r *policyRun) check(ctx context.Context, t policyTarget) error {
	// every finding of both sides is kept (-1) until the baseline is taken; the limit applies to what is added
	in := policy.Input{Catalog: t.head, Packages: t.pkgs, Name: t.name, MigrateLevel: t.migrate, Kubernetes: t.kube, MaxPerRule: -1,
		ImageObjects: r.objects, OFCache: r.ofc}
	if policy.Requires(t.head, t.pkgs) {
		universe, err := r.s.policyUniverse(ctx, t.dir)
		if err != nil {
			return err
		}
		in.Universe = universe
	}
	res, err := policy.Run(ctx, in, r.sev)
	if err != nil {
		return err
	}
	// what the base already had is the base's: the same rules on the same packages at the base (its
	// untouched packages are the head's), as a baseline
	in.Catalog = t.base
	baseRes, err := policy.Run(ctx, in, r.sev)
	if err != nil {
		return err
	}
	added, existing := policy.Baseline(res.Diagnostics, baseRes.Diagnostics)
	r.baseline += len(existing)
	lim := diag.NewLimiter(cmp.Or(r.s.limits().MaxPerRule, diag.DefaultMaxPerRule))
	lim.AddAll(added)
	r.ds = append(r.ds, lim.Diagnostics()...)
	r.truncated = append(r.truncated, lim.Truncated()...)
	r.checked, r.bundles = r.checked+res.Packages, r.bundles+res.Bundles
	r.v1ok, r.v1checked = r.v1ok+res.OLMv1Installable, r.v1checked+res.OLMv1Checked
	r.fromImages += res.FromImages
	return nil
}

// policyUniverse is the whole head catalog in dir, for dependency lookups: the validate stage's load of
// the same checkout, else (it did not finish) a load of its own.
func (s *state) policyUniverse(ctx context.Context, dir string) (*catalog.Catalog, error) {
	if c := s.validated[dir]; c != nil {
		return c, nil
	}
	whole, err := catalog.LoadDir(ctx, path.Join(s.headDir, dir), catalog.LoadOptions{Lean: true,
		MaxFileSize: s.limits().MaxFileBytes, MaxTotalSize: s.limits().MaxTotalBytes})
	if err != nil {
		return nil, fmt.Errorf("loading catalog %s for dependency lookups: %w", dir, err)
	}
	return whole.Catalog, nil
}

// stage is the policy stage of the run over targets catalogs: its findings, and a summary with what OLM v1
// can install, how many bundles' objects came from their images and how many findings the base had.
func (r *policyRun) stage(a *affected, targets int) report.Stage {
	st := report.Stage{Status: report.StatusOf(r.ds, nil), Diagnostics: r.ds, Truncated: r.truncated}
	st.Summary = policySummary(a, len(r.sev), r.checked, r.bundles, targets)
	if r.v1checked > 0 {
		st.Summary += fmt.Sprintf("; OLM v1 can install %d of the %d bundles whose CSV the catalogs hold", r.v1ok, r.v1checked)
	}
	if r.fromImages > 0 {
		st.Summary += fmt.Sprintf("; the objects of %s read from their images", plural(r.fromImages, "bundle"))
	}
	if r.baseline > 0 {
		st.Summary += fmt.Sprintf("; %s already on the base branch, not this change's", plural(r.baseline, "finding"))
	}
	return st
}

// imageObjects reads bundle images' objects for the policy rules that need them when the catalog holds
// only olm.csv.metadata: through the render cache's source (template.Images), with the registry client,
// limits and allow-list of the render stage, within the stage's deadline.
func (s *state) imageObjects() (policy.ImageObjects, error) {
	pull, err := render.NewBundleImages(render.Options{RemoteOptions: s.in.RemoteOptions, AllowedRegistries: s.cfg.Images.AllowedRegistries})
	if err != nil {
		return nil, err
	}
	images := &template.Images{Store: template.NewStore(""), Pull: pull}
	return func(ctx context.Context, image string) ([][]byte, error) {
		b, err := images.Bundle(ctx, image, false)
		if err != nil {
			return nil, err
		}
		if b == nil || b.Bundle == nil {
			return nil, fmt.Errorf("image %s: no bundle rendered", image)
		}
		var out [][]byte
		for _, p := range b.Properties {
			if p.Type != catalog.PropertyBundleObject {
				continue
			}
			var bo catalog.BundleObject
			if err := catalog.DecodeJSON(p.Value, &bo); err != nil {
				return nil, diag.InvalidError(fmt.Errorf("image %s: %w", image, err))
			}
			out = append(out, bo.Data)
		}
		return out, nil
	}, nil
}

// joinSorted is names sorted, at most five of them listed.
func joinSorted(names []string) string {
	slices.Sort(names)
	if len(names) > 5 {
		return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
	}
	return strings.Join(names, ", ")
}

// changedBundleDirs are the bundle directories (operators/<package>/<version>/, the community layout) the
// change touched, with their manifests and their package's ci.yaml at the head, for the bundle directory
// rules.
func (s *state) changedBundleDirs() ([]policy.BundleDir, error) {
	seen := map[string]bool{}
	var out []policy.BundleDir
	for _, p := range s.changes.paths {
		parts := strings.Split(p, "/")
		if len(parts) < 4 || parts[0] != "operators" || parts[2] == "catalog-templates" {
			continue
		}
		dir := path.Join(parts[:3]...)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		fsys, err := s.in.Repo.TreeFS(s.head, dir+"/manifests", func(string) bool { return true })
		if err != nil {
			return nil, err
		}
		bd := policy.BundleDir{Dir: dir, Manifests: map[string][]byte{}}
		if err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				bd.Manifests[name], err = fs.ReadFile(fsys, name)
			}
			return err
		}); err != nil {
			return nil, fmt.Errorf("reading %s/manifests: %w", dir, err)
		}
		if bd.CI, _, err = s.in.Repo.ReadFile(s.head, path.Join("operators", parts[1], config.CIFile)); err != nil {
			return nil, err
		}
		out = append(out, bd)
	}
	return out, nil
}
