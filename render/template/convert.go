package template

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

// conversionProblem is the first error operator-registry's ConvertToModel reports, in its words, among the
// structural checks it makes before validating the model (names, duplicates, olm.package properties,
// versions, bundles and channel entries that do not meet); "" when none of those fails (the catalog may
// still be invalid: the validator then words the problem). Unknown is set when it met what it does not
// check as opm does (a property that does not decode), so that an earlier opm error could be missed.
func conversionProblem(c *catalog.Catalog) (msg string, unknown bool) {
	pkgs := map[string]map[string]bool{} // package -> channels
	for _, p := range c.Packages {
		if p.Name == "" {
			return "config contains package with no name", false
		}
		if _, ok := pkgs[p.Name]; ok {
			return fmt.Sprintf("duplicate package %q", p.Name), false
		}
		pkgs[p.Name] = map[string]bool{}
	}
	// opm keeps, per package, the entries of the last channel read only.
	lastEntries := map[string]map[string]bool{}
	for _, ch := range c.Channels {
		chans, ok := pkgs[ch.Package]
		if !ok {
			return fmt.Sprintf("unknown package %q for channel %q", ch.Package, ch.Name), false
		}
		if ch.Name == "" {
			return fmt.Sprintf("package %q contains channel with no name", ch.Package), false
		}
		if chans[ch.Name] {
			return fmt.Sprintf("package %q has duplicate channel %q", ch.Package, ch.Name), false
		}
		chans[ch.Name] = true
		entries := map[string]bool{}
		for _, e := range ch.Entries {
			if entries[e.Name] {
				return fmt.Sprintf("invalid package %q, channel %q: duplicate entry %q", ch.Package, ch.Name, e.Name), false
			}
			entries[e.Name] = true
		}
		lastEntries[ch.Package] = entries
	}
	inChannels := map[string]map[string]bool{}
	for _, ch := range c.Channels {
		if inChannels[ch.Package] == nil {
			inChannels[ch.Package] = map[string]bool{}
		}
		for _, e := range ch.Entries {
			inChannels[ch.Package][e.Name] = true
		}
	}
	bundles := map[string]map[string]bool{}
	for _, b := range c.Bundles {
		if b.Package == "" {
			return fmt.Sprintf("package name must be set for bundle %q", b.Name), false
		}
		if _, ok := pkgs[b.Package]; !ok {
			return fmt.Sprintf("unknown package %q for bundle %q", b.Package, b.Name), false
		}
		if bundles[b.Package] == nil {
			bundles[b.Package] = map[string]bool{}
		}
		if bundles[b.Package][b.Name] {
			return fmt.Sprintf("package %q has duplicate bundle %q", b.Package, b.Name), false
		}
		bundles[b.Package][b.Name] = true
		var props []struct {
			PackageName string `json:"packageName"`
			Version     string `json:"version"`
		}
		for _, p := range b.Properties {
			if p.Type != catalog.PropertyPackage {
				continue
			}
			var v struct {
				PackageName string `json:"packageName"`
				Version     string `json:"version"`
			}
			if json.Unmarshal(p.Value, &v) != nil {
				return "", true
			}
			props = append(props, v)
		}
		if len(props) != 1 {
			return fmt.Sprintf("package %q bundle %q must have exactly 1 %q property, found %d", b.Package, b.Name, catalog.PropertyPackage, len(props)), false
		}
		if b.Package != props[0].PackageName {
			return fmt.Sprintf("package %q does not match %q property %q", b.Package, catalog.PropertyPackage, props[0].PackageName), false
		}
		if _, err := semver.Parse(props[0].Version); err != nil {
			return fmt.Sprintf("error parsing bundle %q version %q: %v", b.Name, props[0].Version, err), false
		}
		delete(lastEntries[b.Package], b.Name)
		if !inChannels[b.Package][b.Name] {
			return fmt.Sprintf("package %q, bundle %q not found in any channel entries", b.Package, b.Name), false
		}
	}
	var withEntries []string
	for pkg, entries := range lastEntries {
		if len(entries) > 0 {
			withEntries = append(withEntries, pkg)
		}
	}
	if len(withEntries) > 0 {
		slices.Sort(withEntries)
		var names []string
		for n := range lastEntries[withEntries[0]] {
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Sprintf("no olm.bundle blobs found in package %q for olm.channel entries %s", withEntries[0], names), false
	}
	return "", false
}
