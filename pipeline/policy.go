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
func (s *state) policy(ctx context.Context) report.Stage {
	sev := policy.SeveritiesOf(s.cfg.Policy) // Run adds the stage only when some rule is enabled
	type target struct {
		name, dir, migrate, kube string
		head, base               *catalog.Catalog
		pkgs                     map[string]bool
	}
	var targets []target
	ch := policy.Change{Paths: s.changes.paths}
	pairs, a, err := s.catalogPairs(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	pkgs := map[string]bool{}
	for _, p := range a.packages {
		pkgs[p] = true
	}
	for _, p := range pairs {
		if len(pkgs) == 0 {
			break // no package to check
		}
		targets = append(targets, target{a.catalogName(p.cat), path.Clean(p.cat.Dir), p.cat.MigrateLevel, p.cat.Kubernetes, p.head, p.base, pkgs})
	}
	ch.Packages = a.packages
	for _, j := range a.jobs {
		ch.Mappings = append(ch.Mappings, policy.Mapping{Package: j.Package, Template: j.Template, Catalog: j.Catalog.Name, File: j.CI, Line: j.CILine})
	}
	for _, c := range a.catalogs {
		ch.CatalogDirs = append(ch.CatalogDirs, c.Dir)
	}
	ds := policy.CheckChange(ch, sev)
	for _, p := range s.changes.paths {
		parts := strings.Split(p, "/")
		ci := len(parts) == 3 && parts[0] == "operators" && parts[2] == config.CIFile
		release := len(parts) == 4 && parts[0] == "operators" && parts[3] == "release-config.yaml"
		if !ci && !release {
			continue
		}
		data, ok, err := s.in.Repo.ReadFile(s.head, p)
		if err != nil {
			return stageFromErr(err)
		}
		switch {
		case !ok:
		case ci:
			ds = append(ds, policy.CheckCI(p, data, sev)...)
		default:
			ciData, _, err := s.in.Repo.ReadFile(s.head, path.Join("operators", parts[1], config.CIFile))
			if err != nil {
				return stageFromErr(err)
			}
			ds = append(ds, policy.CheckReleaseConfig(p, data, ciData, sev)...)
		}
	}
	bundleDirs, err := s.changedBundleDirs()
	if err != nil {
		return stageFromErr(err)
	}
	for _, bd := range bundleDirs {
		ds = append(ds, policy.CheckBundleDir(bd, sev)...)
	}
	if len(targets) == 0 && len(ds) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no catalog package changed"}
	}
	st := report.Stage{}
	checked, bundles, v1ok, v1checked, fromImages, baseline := 0, 0, 0, 0, 0, 0
	var objects policy.ImageObjects
	if s.cfg.Policy.BundleImages {
		var err error
		if objects, err = s.imageObjects(); err != nil {
			return stageFromErr(err)
		}
	}
	ofc := policy.NewOFCache(policy.OFCacheDir()) // both sides of every catalog, and later checks
	for _, t := range targets {
		// every finding of both sides is kept (-1) until the baseline is taken; the limit applies to what is added
		in := policy.Input{Catalog: t.head, Packages: t.pkgs, Name: t.name, MigrateLevel: t.migrate, Kubernetes: t.kube, MaxPerRule: -1,
			ImageObjects: objects, OFCache: ofc}
		if policy.Requires(t.head, t.pkgs) {
			// the validate stage's load of the same checkout, else (it did not finish) a load of its own
			if in.Universe = s.validated[t.dir]; in.Universe == nil {
				whole, err := catalog.LoadDir(ctx, path.Join(s.headDir, t.dir), catalog.LoadOptions{Lean: true,
					MaxFileSize: s.limits().MaxFileBytes, MaxTotalSize: s.limits().MaxTotalBytes})
				if err != nil {
					return stageFromErr(fmt.Errorf("loading catalog %s for dependency lookups: %w", t.dir, err))
				}
				in.Universe = whole.Catalog
			}
		}
		res, err := policy.Run(ctx, in, sev)
		if err != nil {
			return stageFromErr(err)
		}
		// what the base already had is the base's: the same rules on the same packages at the base (its
		// untouched packages are the head's), as a baseline
		in.Catalog = t.base
		baseRes, err := policy.Run(ctx, in, sev)
		if err != nil {
			return stageFromErr(err)
		}
		added, existing := policy.Baseline(res.Diagnostics, baseRes.Diagnostics)
		baseline += len(existing)
		lim := diag.NewLimiter(cmp.Or(s.limits().MaxPerRule, diag.DefaultMaxPerRule))
		for _, d := range added {
			if d.File != "" {
				d.File = path.Join(t.dir, d.File)
			}
			lim.Add(d)
		}
		ds = append(ds, lim.Diagnostics()...)
		st.Truncated = append(st.Truncated, lim.Truncated()...)
		checked, bundles = checked+res.Packages, bundles+res.Bundles
		v1ok, v1checked = v1ok+res.OLMv1Installable, v1checked+res.OLMv1Checked
		fromImages += res.FromImages
	}
	st.Status, st.Diagnostics = report.StatusOf(ds, nil), ds
	st.Summary = policySummary(a, len(sev), checked, bundles, len(targets))
	if v1checked > 0 {
		st.Summary += fmt.Sprintf("; OLM v1 can install %d of the %d bundles whose CSV the catalogs hold", v1ok, v1checked)
	}
	if fromImages > 0 {
		st.Summary += fmt.Sprintf("; the objects of %s read from their images", plural(fromImages, "bundle"))
	}
	if baseline > 0 {
		st.Summary += fmt.Sprintf("; %s already on the base branch, not this change's", plural(baseline, "finding"))
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
