package policy

import (
	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

// index is the catalog as the rules walk it: packages to check in catalog order, every package's bundles
// by name with their versions (dependencies look beyond the checked packages), and who provides each GVK.
type index struct {
	order    []*pkgIndex
	all      map[string]*pkgIndex
	gvkOwner map[catalog.GVK][]*bundleIndex
}

type pkgIndex struct {
	name     string
	pkg      *catalog.Package
	channels []*catalog.Channel
	bundles  []*bundleIndex
	byName   map[string]*bundleIndex
	check    bool
}

type bundleIndex struct {
	b       *catalog.Bundle
	version semver.Version
	vOK     bool
}

// newIndex indexes c (the packages to check: those only names, or all) and then, for dependency lookups,
// the packages of universe that c does not hold.
func newIndex(c, universe *catalog.Catalog, only map[string]bool) *index {
	ix := &index{all: map[string]*pkgIndex{}, gvkOwner: map[catalog.GVK][]*bundleIndex{}}
	ix.add(c, func(name string) bool { return only == nil || only[name] }, nil)
	if universe != nil && universe != c {
		fromC := map[string]bool{}
		for name := range ix.all {
			fromC[name] = true
		}
		ix.add(universe, func(string) bool { return false }, fromC)
	}
	return ix
}

// add indexes c's blobs, but those of the packages in skip; check says which packages are checked.
func (ix *index) add(c *catalog.Catalog, check func(string) bool, skip map[string]bool) {
	get := func(name string) *pkgIndex {
		if skip[name] {
			return nil
		}
		p := ix.all[name]
		if p == nil {
			p = &pkgIndex{name: name, byName: map[string]*bundleIndex{}, check: check(name)}
			ix.all[name] = p
			if p.check {
				ix.order = append(ix.order, p)
			}
		}
		return p
	}
	for _, p := range c.Packages {
		if pi := get(p.Name); pi != nil && pi.pkg == nil {
			pi.pkg = p
		}
	}
	for _, ch := range c.Channels {
		if pi := get(ch.Package); pi != nil {
			pi.channels = append(pi.channels, ch)
		}
	}
	for _, b := range c.Bundles {
		pi := get(b.Package)
		if pi == nil {
			continue
		}
		bi := &bundleIndex{b: b}
		if b.Parsed != nil && len(b.Parsed.Packages) == 1 {
			bi.version, bi.vOK = parseVersion(b.Parsed.Packages[0].Version)
		}
		if _, dup := pi.byName[b.Name]; !dup { // a duplicate is validate's finding; the first wins
			pi.byName[b.Name] = bi
			pi.bundles = append(pi.bundles, bi)
		}
		if b.Parsed != nil {
			for _, g := range b.Parsed.GVKs {
				ix.gvkOwner[g] = append(ix.gvkOwner[g], bi)
			}
		}
	}
}

func parseVersion(s string) (semver.Version, bool) {
	v, err := semver.Parse(s)
	return v, err == nil
}

// entryPos is where a channel entry is, or its channel when the entry has no position.
func entryPos(c *catalog.Channel, e catalog.ChannelEntry) catalog.Pos {
	if e.Pos.File != "" {
		return e.Pos
	}
	return c.Pos
}
