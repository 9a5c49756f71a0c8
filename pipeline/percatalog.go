package pipeline

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/graph"
	"github.com/catalogbot/catalogbot/checks/images"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// The graph and images stages of a template-driven repository: each catalog holding a touched package is
// compared between the base and the head (as git stores them), the graph diffs of catalogs that changed
// alike are reported once, and each image is checked once whatever the number of catalogs naming it.

// catalogPair is one affected catalog's touched packages at the base and at the head.
type catalogPair struct {
	cat        config.Catalog
	base, head *catalog.Catalog
}

// catalogPairs loads, for every catalog holding a touched package, the touched packages' blobs at the base
// and at the head, read from git (catalog-relative positions; the checks name files under the catalog's
// directory).
func (s *state) catalogPairs(ctx context.Context) ([]catalogPair, *affected, error) {
	a, err := s.affectedCatalogs(ctx)
	if err != nil {
		return nil, nil, err
	}
	if s.pairs != nil {
		return *s.pairs, a, nil
	}
	want := map[string]bool{}
	for _, p := range a.packages {
		want[p] = true
	}
	// A catalog's touched packages' directories, and the directories of its changed files (whose blobs may
	// name a package another directory holds).
	changedTops := map[string]map[string]bool{}
	for _, p := range s.changes.paths {
		if c, rel, ok := s.layout.CatalogOf(p); ok {
			if changedTops[c.Name] == nil {
				changedTops[c.Name] = map[string]bool{}
			}
			top, _, _ := strings.Cut(rel, "/")
			changedTops[c.Name][top] = true
		}
	}
	var out []catalogPair
	for _, c := range a.dirs {
		dir := path.Clean(c.Dir)
		tops := changedTops[c.Name]
		include := func(p string) bool {
			top, _, _ := strings.Cut(p, "/")
			return want[top] || tops[top] || path.Base(p) == catalog.IndexIgnore
		}
		pair := catalogPair{cat: c}
		for _, side := range []struct {
			rev **catalog.Catalog
			at  string
		}{{&pair.base, "base"}, {&pair.head, "head"}} {
			commit := s.base
			if side.at == "head" {
				commit = s.head
			}
			fsys, err := s.in.Repo.TreeFS(commit, dir, include)
			if err != nil {
				return nil, nil, err
			}
			cat, err := loadSubset(ctx, fsys, dir)
			if err != nil {
				return nil, nil, fmt.Errorf("loading catalog %s at the %s: %w", c.Name, side.at, err)
			}
			*side.rev = cat
		}
		out = append(out, pair)
	}
	s.pairs = &out // the graph and images stages read the same catalogs
	return out, a, nil
}

// catalogDiff is one catalog's graph diff, and the key under which identical diffs are grouped.
type catalogDiff struct {
	cat   config.Catalog
	head  *catalog.Catalog
	diffs []graph.ChannelDiff
	ds    []diag.Diagnostic
	key   string
}

// graph diffs the upgrade graph of the touched packages in every catalog holding one. Catalogs whose
// diffs (channels, heads, entries, edges, and released-bundle findings) are identical are described once,
// under the list of their names; released-bundle findings stay on each catalog's line. A layout of one
// catalog names no catalog.
func (s *state) graph(ctx context.Context) report.Stage {
	pairs, a, err := s.catalogPairs(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	if len(a.packages) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no catalog package changed"}
	}
	if len(pairs) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no catalog holds a touched package"}
	}
	pkgs := map[string]bool{}
	for _, p := range a.packages {
		pkgs[p] = true
	}
	var all []diag.Diagnostic
	var changed []catalogDiff
	channels := 0
	for _, p := range pairs {
		diffs, ds := graph.DiffGraphs(p.base, p.head, pkgs, s.cfg.Graph.AllowModifyReleased)
		var key strings.Builder
		for _, d := range diffs {
			fmt.Fprintf(&key, "%+v\n", d)
		}
		for i := range ds {
			fmt.Fprintf(&key, "%s %s %s %s %s\n", ds[i].Severity, ds[i].Rule, ds[i].Package, ds[i].Bundle, ds[i].Message)
		}
		all = append(all, ds...)
		if len(diffs) == 0 && len(ds) == 0 {
			continue
		}
		channels += len(diffs)
		changed = append(changed, catalogDiff{cat: p.cat, head: p.head, diffs: diffs, ds: ds, key: key.String()})
	}
	return graphStage(a, len(pairs), channels, changed, all)
}

// groupDiffs groups catalog diffs by key, in the order their first catalog comes.
func groupDiffs(ds []catalogDiff) [][]catalogDiff {
	var groups [][]catalogDiff
	index := map[string]int{}
	for _, d := range ds {
		i, ok := index[d.key]
		if !ok {
			i = len(groups)
			index[d.key] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], d)
	}
	return groups
}

// demote turns the channel headings of graph.GraphDetails into subheadings of a catalog group.
func demote(md string) string {
	return strings.ReplaceAll("\n"+md, "\n#### ", "\n##### ")[1:]
}

// imageUse is one image reference of a bundle field, with every catalog that holds it.
type imageUse struct {
	ref      images.Ref
	catalogs []string
}

// imageUses are the unique uses (image, package, bundle, field) of the new or changed bundles, in the
// order found, and those bundles.
type imageUses struct {
	uses    []*imageUse
	byKey   map[string]*imageUse
	bundles map[string]bool
}

// add records the image uses of head's bundles of the packages pkgs that base does not hold or holds
// changed, in catalog c, at their files under head.Dir; place, when set, sets a new use's file and line
// instead.
func (u *imageUses) add(c config.Catalog, base, head *catalog.Catalog, pkgs map[string]bool, place func(*images.Ref)) {
	old := map[string]*catalog.Bundle{}
	if base != nil {
		for _, b := range base.Bundles {
			old[b.Package+"/"+b.Name] = b
		}
	}
	sub := &catalog.Catalog{Dir: head.Dir}
	for _, b := range head.Bundles {
		if prev, ok := old[b.Package+"/"+b.Name]; pkgs[b.Package] && (!ok || graph.BundleChange(prev, b) != "") {
			sub.Bundles = append(sub.Bundles, b)
			u.bundles[b.Package+"/"+b.Name] = true
		}
	}
	for _, r := range images.RefsFromCatalog(sub) {
		k := strings.Join([]string{r.Image, r.Package, r.Bundle, r.Field}, "\x00")
		use, ok := u.byKey[k]
		if !ok {
			if place != nil {
				place(&r)
			}
			use = &imageUse{ref: r}
			u.byKey[k] = use
			u.uses = append(u.uses, use)
		}
		if !slices.Contains(use.catalogs, c.Name) {
			use.catalogs = append(use.catalogs, c.Name)
		}
	}
}

// images checks the images of the new or changed bundles of the touched packages in every catalog holding
// one, each unique use (image, package, bundle, field) once: its diagnostic is on the first catalog's
// line and names every catalog that references the image (a layout of one catalog names none).
func (s *state) images(ctx context.Context) report.Stage {
	if s.in.SkipImages {
		return report.Stage{Status: report.Skipped, Summary: "image checks disabled for this run"}
	}
	pairs, a, err := s.catalogPairs(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	pkgs := map[string]bool{}
	for _, p := range a.packages {
		pkgs[p] = true
	}
	u := &imageUses{byKey: map[string]*imageUse{}, bundles: map[string]bool{}}
	baseOf := map[string]*catalog.Catalog{}
	for _, p := range pairs {
		baseOf[p.cat.Name] = p.base
		u.add(p.cat, p.base, p.head, pkgs, nil)
	}
	// The bundles the rendered change adds: a template change committed without its render (the render
	// stage fails it) still has its new bundle images checked, on the template's line naming them.
	if err := s.renderedImages(ctx, u, baseOf, pkgs); err != nil {
		return stageFromErr(err)
	}
	uses, bundles := u.uses, u.bundles
	if len(uses) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no new or changed bundle references an image"}
	}
	refs := make([]images.Ref, 0, len(uses))
	unique := map[string]bool{}
	for _, u := range uses {
		refs = append(refs, u.ref)
		unique[u.ref.Image] = true
	}
	c := &images.Checker{RemoteOptions: s.in.RemoteOptions, Policy: images.Policy{
		RequireDigest: s.cfg.Images.RequireDigest, AllowedRegistries: s.cfg.Images.AllowedRegistries, RequiredPlatforms: s.cfg.Images.RequiredPlatforms}}
	ds, err := c.Check(ctx, refs)
	st := imagesStage(a, uses, len(unique), len(bundles), len(pairs), ds)
	if err != nil {
		st.Err, st.Status = err.Error(), report.StatusOf(ds, err)
	}
	return st
}
