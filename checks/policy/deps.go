package policy

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

// The dependency rules: what OLM's resolver would only find out on a cluster.
const (
	ruleDepUnsatisfied = "policy-dependency-unsatisfied"
	ruleDepConflict    = "policy-dependency-conflict"
)

var dependencyRules = []string{ruleDepUnsatisfied, ruleDepConflict}

func (r *run) dependencies() {
	if r.on(ruleDepUnsatisfied) {
		for _, p := range r.ix.order {
			if r.ctx.Err() != nil {
				return
			}
			for _, bi := range p.bundles {
				r.unsatisfied(p, bi)
			}
		}
	}
	if r.on(ruleDepConflict) {
		r.conflicts()
	}
}

func (r *run) unsatisfied(p *pkgIndex, bi *bundleIndex) {
	b := bi.b
	if b.Parsed == nil {
		return
	}
	f := finding{rule: ruleDepUnsatisfied, pos: b.Pos, pkg: p.name, bundle: b.Name}
	for _, req := range b.Parsed.PackagesRequired {
		rng, err := semver.ParseRange(req.VersionRange)
		if err != nil {
			f.msg = fmt.Sprintf("bundle %q requires package %q in versionRange %q, which does not parse: %v", b.Name, req.PackageName, req.VersionRange, err)
			f.hint = "write a semver range such as \">=1.2.0 <2.0.0\" (OLM's resolver cannot use this one)"
			r.add(f)
			continue
		}
		if r.satisfying(req.PackageName, rng) == nil {
			f.msg = fmt.Sprintf("bundle %q requires package %q in %q, but no bundle of the catalog%s satisfies it (%s): OLM cannot install it",
				b.Name, req.PackageName, req.VersionRange, r.inCatalog(), r.versionsOf(req.PackageName))
			f.hint = fmt.Sprintf("add a bundle of %q in that range to the catalog, or relax the olm.package.required property", req.PackageName)
			r.add(f)
		}
	}
	for _, g := range b.Parsed.GVKsRequired {
		if len(r.ix.gvkOwner[g]) == 0 {
			f.msg = fmt.Sprintf("bundle %q requires API %s/%s %s (olm.gvk.required), but no bundle of the catalog%s provides it: OLM cannot install it",
				b.Name, g.Group, g.Version, g.Kind, r.inCatalog())
			f.hint = "add the operator that owns the API to the catalog, or drop the olm.gvk.required property"
			r.add(f)
		}
	}
}

// satisfying lists the versions of pkg in the catalog that rng matches.
func (r *run) satisfying(pkg string, rng semver.Range) []semver.Version {
	var out []semver.Version
	if p := r.ix.all[pkg]; p != nil {
		for _, bi := range p.bundles {
			if bi.vOK && rng(bi.version) {
				out = append(out, bi.version)
			}
		}
	}
	return out
}

func (r *run) versionsOf(pkg string) string {
	p := r.ix.all[pkg]
	if p == nil || len(p.bundles) == 0 {
		return "the catalog has no package " + fmt.Sprintf("%q", pkg)
	}
	var vs []semver.Version
	for _, bi := range p.bundles {
		if bi.vOK {
			vs = append(vs, bi.version)
		}
	}
	semver.Sort(vs)
	if len(vs) > 6 {
		return fmt.Sprintf("it has %d versions, %s to %s", len(vs), vs[0], vs[len(vs)-1])
	}
	return fmt.Sprintf("it has %v", vs)
}

// requirement is one olm.package.required of a package's default channel head.
type requirement struct {
	pkg string
	b   *catalog.Bundle
	req catalog.PackageRequired
	rng semver.Range
}

// conflicts reports two packages whose default channel heads require one package in ranges that no
// bundle of it satisfies together, each being satisfiable alone: installing both fails on a cluster.
func (r *run) conflicts() {
	byTarget := map[string][]requirement{}
	for _, name := range sortedPackages(r.ix) {
		p := r.ix.all[name]
		b := defaultHead(p)
		if b == nil {
			continue
		}
		for _, req := range b.Parsed.PackagesRequired {
			if rng, err := semver.ParseRange(req.VersionRange); err == nil && r.satisfying(req.PackageName, rng) != nil {
				byTarget[req.PackageName] = append(byTarget[req.PackageName], requirement{pkg: name, b: b, req: req, rng: rng})
			}
		}
	}
	for _, target := range slices.Sorted(maps.Keys(byTarget)) {
		reqs := byTarget[target]
		for i, a := range reqs {
			if r.ctx.Err() != nil { // many packages requiring one are pairs x pairs: stop at the deadline
				return
			}
			for _, o := range reqs[i+1:] {
				if a.pkg == o.pkg || !r.ix.all[a.pkg].check && !r.ix.all[o.pkg].check {
					continue
				}
				both := func(v semver.Version) bool { return a.rng(v) && o.rng(v) }
				if r.satisfying(target, both) != nil {
					continue
				}
				for _, side := range []struct{ me, other requirement }{{a, o}, {o, a}} {
					if !r.ix.all[side.me.pkg].check {
						continue
					}
					r.add(finding{rule: ruleDepConflict, pos: side.me.b.Pos, pkg: side.me.pkg, bundle: side.me.b.Name,
						msg: fmt.Sprintf("bundle %q requires package %q in %q and bundle %q (package %q) requires it in %q: no bundle of %q%s satisfies both, so the two cannot be installed together",
							side.me.b.Name, target, side.me.req.VersionRange, side.other.b.Name, side.other.pkg, side.other.req.VersionRange, target, r.inCatalog()),
						hint: fmt.Sprintf("widen one of the ranges so they share a version of %q the catalog serves", target)})
				}
			}
		}
	}
}

func sortedPackages(ix *index) []string {
	names := make([]string, 0, len(ix.all))
	for n := range ix.all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// defaultHead is the head bundle of p's default channel, or nil when it has none (validate's finding).
func defaultHead(p *pkgIndex) *catalog.Bundle {
	if p.pkg == nil {
		return nil
	}
	i := slices.IndexFunc(p.channels, func(c *catalog.Channel) bool { return c.Name == p.pkg.DefaultChannel })
	if i < 0 {
		return nil
	}
	head := catalog.NewGraph(p.channels[i]).Head()
	if bi := p.byName[head]; bi != nil && bi.b.Parsed != nil {
		return bi.b
	}
	return nil
}
