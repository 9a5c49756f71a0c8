package smoke

import (
	"slices"

	"github.com/catalogbot/catalogbot/catalog"
)

// BundleRef names one bundle of a catalog.
type BundleRef struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
}

// Plan is what a change's smoke install needs to know from its catalogs; see PlanChange.
type Plan struct {
	// Packages are the changed packages the head catalog holds (sorted).
	Packages []string
	// FromBase are those the base catalog already offers on the same channel: they are installed
	// from the base first and must upgrade once the CatalogSource serves the head.
	FromBase []string
	// Expect is each package's channel head in the head catalog: the CSV its install must end at.
	Expect map[string]string
	// BundleImages maps every bundle image of the packages (base and head) to its bundle.
	BundleImages map[string]BundleRef
	// Versions is the olm.package version of each package's Expect bundle (OLM v1 pins it); a bundle
	// without a version is left out.
	Versions map[string]string
	// BaseVersions is the version of the base catalog's channel head for the packages of FromBase
	// (OLM v1 installs it first).
	BaseVersions map[string]string
}

// PlanChange plans the smoke install of the changed packages pkgs from base (nil: no base catalog) to
// head. channel gives a package's channel ("" or missing: its default channel). A package is installed
// from the base only when the base has it with the same channel name at the head of the subscription,
// so that the upgrade OLM is asked for is the one subscribed clusters will see.
func PlanChange(base, head *catalog.Catalog, pkgs []string, channel map[string]string) Plan {
	p := Plan{Expect: map[string]string{}, BundleImages: map[string]BundleRef{}, Versions: map[string]string{}, BaseVersions: map[string]string{}}
	for _, pkg := range pkgs {
		ch, ok := channelOf(head, pkg, channel[pkg])
		if !ok {
			continue
		}
		p.Packages = append(p.Packages, pkg)
		p.Expect[pkg] = catalog.NewGraph(ch).Head()
		if v := versionOf(head, pkg, p.Expect[pkg]); v != "" {
			p.Versions[pkg] = v
		}
		if base != nil {
			if bch, ok := channelOf(base, pkg, channel[pkg]); ok && bch.Name == ch.Name && catalog.NewGraph(bch).Head() != "" {
				p.FromBase = append(p.FromBase, pkg)
				if v := versionOf(base, pkg, catalog.NewGraph(bch).Head()); v != "" {
					p.BaseVersions[pkg] = v
				}
			}
		}
	}
	slices.Sort(p.Packages)
	slices.Sort(p.FromBase)
	for _, c := range []*catalog.Catalog{base, head} {
		if c == nil {
			continue
		}
		for _, b := range c.Bundles {
			if b.Image != "" && slices.Contains(p.Packages, b.Package) {
				p.BundleImages[b.Image] = BundleRef{Package: b.Package, Bundle: b.Name}
			}
		}
	}
	return p
}

// channelOf is pkg's channel name (its default channel when name is "") in c.
func channelOf(c *catalog.Catalog, pkg, name string) (*catalog.Channel, bool) {
	if name == "" {
		for _, p := range c.Packages {
			if p.Name == pkg {
				name = p.DefaultChannel
			}
		}
	}
	for _, ch := range c.Channels {
		if ch.Package == pkg && ch.Name == name {
			return ch, true
		}
	}
	return nil, false
}

// versionOf is the olm.package version of pkg's bundle name in c ("" when it has none).
func versionOf(c *catalog.Catalog, pkg, name string) string {
	for _, b := range c.Bundles {
		if b.Package == pkg && b.Name == name && b.Parsed != nil {
			for _, pp := range b.Parsed.Packages {
				if pp.PackageName == pkg {
					return pp.Version
				}
			}
		}
	}
	return ""
}
