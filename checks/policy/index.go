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

func newIndex(c *catalog.Catalog, only map[string]bool) *index {
	ix := &index{all: map[string]*pkgIndex{}, gvkOwner: map[catalog.GVK][]*bundleIndex{}}
	get := func(name string) *pkgIndex {
		p := ix.all[name]
		if p == nil {
			p = &pkgIndex{name: name, byName: map[string]*bundleIndex{}, check: only == nil || only[name]}
			ix.all[name] = p
			if p.check {
				ix.order = append(ix.order, p)
			}
		}
		return p
	}
	for _, p := range c.Packages {
		if pi := get(p.Name); pi.pkg == nil {
			pi.pkg = p
		}
	}
	for _, ch := range c.Channels {
		pi := get(ch.Package)
		pi.channels = append(pi.channels, ch)
	}
	for _, b := range c.Bundles {
		pi := get(b.Package)
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
	return ix
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
