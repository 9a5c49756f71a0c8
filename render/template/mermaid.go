package template

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

// Decoration classes of the mermaid graph, in the order opm prints them.
var mermaidClasses = []string{"deprecated", "deprecatedskipped", "skipped"}

// WriteMermaid prints the channels of a rendered template as `opm alpha render-template -o mermaid`
// does: a "graph LR" with a subgraph per package and channel, each channel's entries by decreasing
// version with their skip, skipRange and replace edges, deprecated packages, channels and bundles
// styled, and the edges that lead to an already skipped entry drawn red. A skipRange that does not
// parse is left out with opm's warning on warn. opm v1.46.0 (opm) drew an older graph: writeMermaidV1_46.
func WriteMermaid(w io.Writer, c *catalog.Catalog, opm OPMVersion, warn io.Writer) error {
	versions, err := bundleVersions(c.Bundles)
	if err != nil {
		return err
	}
	if opm == OPMv1_46_0 {
		return writeMermaidV1_46(w, c, versions, warn)
	}
	chans := slices.Clone(c.Channels)
	// opm sorts with sort.Slice; the same call on the same order keeps its order of equal names.
	sort.Slice(chans, func(i, j int) bool { return chans[i].Name < chans[j].Name })

	depPkg, depChan, depBundle := deprecated(c)

	g := &mermaidGraph{versions: versions, pkgs: map[string]*strings.Builder{}, classes: map[string][]string{}, warn: warn}
	for _, ch := range chans {
		g.channel(ch, depPkg, depChan, depBundle)
	}

	var b strings.Builder
	b.WriteString("graph LR\n")
	b.WriteString("  classDef deprecated fill:#E8960F\n")
	b.WriteString("  classDef skipped stroke:#FF0000,stroke-width:4px\n")
	b.WriteString("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n")
	names := make([]string, 0, len(g.pkgs))
	for n := range g.pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "  %%%% package %q\n  subgraph %q\n%s  end\n", n, n, g.pkgs[n].String())
	}
	if g.deprecatedPkg != "" {
		fmt.Fprintf(&b, "style %s fill:#989695\n", g.deprecatedPkg)
	}
	for _, id := range g.deprecatedChans {
		fmt.Fprintf(&b, "style %s fill:#DCD0FF\n", id)
	}
	for _, class := range mermaidClasses {
		if ids := slices.Clone(g.classes[class]); len(ids) > 0 {
			slices.Sort(ids)
			fmt.Fprintf(&b, "class %s %s\n", strings.Join(ids, ","), class)
		}
	}
	if len(g.redLinks) > 0 {
		fmt.Fprintf(&b, "linkStyle %s stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n", strings.Join(g.redLinks, ","))
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// mermaidGraph is the state of one WriteMermaid: edges are numbered across all channels, as mermaid's
// linkStyle counts them.
type mermaidGraph struct {
	versions        map[string]semver.Version
	pkgs            map[string]*strings.Builder
	deprecatedPkg   string
	deprecatedChans []string
	classes         map[string][]string
	link            int
	redLinks        []string
	warn            io.Writer
}

func (g *mermaidGraph) channel(ch *catalog.Channel, depPkg, depChan, depBundle map[string]bool) {
	b := g.pkgs[ch.Package]
	if b == nil {
		b = &strings.Builder{}
		g.pkgs[ch.Package] = b
	}
	id := ch.Package + "-" + ch.Name
	fmt.Fprintf(b, "    %%%% channel %q\n    subgraph %s[%q]\n", ch.Name, id, ch.Name)
	if depPkg[ch.Package] {
		g.deprecatedPkg = ch.Package
	}
	if depChan[ch.Name] {
		g.deprecatedChans = append(g.deprecatedChans, id)
	}
	entries := make([]*catalog.ChannelEntry, len(ch.Entries))
	for i := range ch.Entries {
		entries[i] = &ch.Entries[i]
	}
	sort.Slice(entries, func(i, j int) bool { return g.versions[entries[i].Name].GT(g.versions[entries[j].Name]) })

	// skipped holds the entries some newer entry already skips: another edge into one is drawn red.
	skipped := map[string]bool{}
	edge := func(from, fromName, label, to, toName string) {
		fmt.Fprintf(b, "      %s[%q]-- %s --> %s[%q]\n", from, fromName, label, to, toName)
	}
	for _, e := range entries {
		eid := id + "-" + e.Name
		fmt.Fprintf(b, "      %s[%q]\n", eid, e.Name)
		switch {
		case depBundle[e.Name] && skipped[e.Name]:
			g.classes["deprecatedskipped"] = append(g.classes["deprecatedskipped"], eid)
		case depBundle[e.Name]:
			g.classes["deprecated"] = append(g.classes["deprecated"], eid)
		case skipped[e.Name]:
			g.classes["skipped"] = append(g.classes["skipped"], eid)
		}
		for _, s := range e.Skips {
			edge(id+"-"+s, s, "skip", eid, e.Name)
			if skipped[s] {
				g.red()
			} else {
				skipped[s] = true
			}
			g.link++
		}
		if e.SkipRange != "" {
			inRange, err := semver.ParseRange(e.SkipRange)
			if err != nil {
				if g.warn != nil {
					fmt.Fprintf(g.warn, "warning: ignoring invalid SkipRange for package/edge %q/%q: %v\n", ch.Package, e.Name, err)
				}
			} else {
				for _, other := range ch.Entries {
					if inRange(g.versions[other.Name]) {
						edge(id+"-"+other.Name, other.Name, `"skipRange(`+e.SkipRange+`)"`, eid, e.Name)
						g.redIf(skipped[e.Name])
					}
				}
			}
		}
		if e.Replaces != "" {
			edge(id+"-"+e.Replaces, e.Replaces, "replace", eid, e.Name)
			g.redIf(skipped[e.Name])
		}
	}
	b.WriteString("    end\n")
}

// red marks the current edge red.
func (g *mermaidGraph) red() { g.redLinks = append(g.redLinks, strconv.Itoa(g.link)) }

// redIf marks the current edge red when cond holds, and moves to the next edge.
func (g *mermaidGraph) redIf(cond bool) {
	if cond {
		g.red()
	}
	g.link++
}

// bundleVersions maps each bundle name (its first blob) to its olm.package version, with opm's errors for
// a bundle without exactly one olm.package property or with a version that is not semver.
func bundleVersions(bundles []*catalog.Bundle) (map[string]semver.Version, error) {
	versions := map[string]semver.Version{}
	for _, b := range bundles {
		if _, ok := versions[b.Name]; ok {
			continue
		}
		var pkgs []string
		for _, p := range b.Properties {
			if p.Type != catalog.PropertyPackage {
				continue
			}
			var v struct {
				Version string `json:"version"`
			}
			if err := json.Unmarshal(p.Value, &v); err != nil {
				return nil, fmt.Errorf("parse properties for bundle %q: parse property[%d] of type %q: %v", b.Name, len(pkgs), p.Type, err)
			}
			pkgs = append(pkgs, v.Version)
		}
		if len(pkgs) != 1 {
			return nil, fmt.Errorf("bundle %q has multiple %q properties, expected exactly 1", b.Name, catalog.PropertyPackage)
		}
		v, err := semver.Parse(pkgs[0])
		if err != nil {
			return nil, fmt.Errorf("bundle %q has invalid version %q: %v", b.Name, pkgs[0], err)
		}
		versions[b.Name] = v
	}
	return versions, nil
}

// writeMermaidV1_46 draws the graph as opm v1.46.0 does: entries in channel order, each with its replace,
// skip and skipRange edges, a deprecated bundle marked ":::deprecated", and no skipped-edge styling.
func writeMermaidV1_46(w io.Writer, c *catalog.Catalog, versions map[string]semver.Version, warn io.Writer) error {
	chans := slices.Clone(c.Channels)
	sort.Slice(chans, func(i, j int) bool { return chans[i].Name < chans[j].Name })
	depPkg, depChan, depBundle := deprecated(c)
	pkgs := map[string]*strings.Builder{}
	deprecatedPkg := ""
	var deprecatedChans []string
	var zero semver.Version
	for _, ch := range chans {
		b := pkgs[ch.Package]
		if b == nil {
			b = &strings.Builder{}
			pkgs[ch.Package] = b
		}
		id := ch.Package + "-" + ch.Name
		fmt.Fprintf(b, "    %%%% channel %q\n    subgraph %s[%q]\n", ch.Name, id, ch.Name)
		if depPkg[ch.Package] {
			deprecatedPkg = ch.Package
		}
		if depChan[ch.Name] {
			deprecatedChans = append(deprecatedChans, id)
		}
		for _, e := range ch.Entries {
			if versions[e.Name].LT(zero) {
				continue
			}
			mark := ""
			if depBundle[e.Name] {
				mark = ":::deprecated"
			}
			eid := id + "-" + e.Name
			fmt.Fprintf(b, "      %s[%q]%s\n", eid, e.Name, mark)
			if e.Replaces != "" {
				fmt.Fprintf(b, "      %s[%q]-- replace --> %s[%q]\n", id+"-"+e.Replaces, e.Replaces, eid, e.Name)
			}
			for _, s := range e.Skips {
				fmt.Fprintf(b, "      %s[%q]-- skip --> %s[%q]\n", id+"-"+s, s, eid, e.Name)
			}
			if e.SkipRange == "" {
				continue
			}
			inRange, err := semver.ParseRange(e.SkipRange)
			if err != nil {
				if warn != nil {
					fmt.Fprintf(warn, "warning: ignoring invalid SkipRange for package/edge %q/%q: %v\n", ch.Package, e.Name, err)
				}
				continue
			}
			for _, other := range ch.Entries {
				if inRange(versions[other.Name]) {
					fmt.Fprintf(b, "      %s[%q]-- \"skipRange(%s)\" --> %s[%q]\n", id+"-"+other.Name, other.Name, e.SkipRange, eid, e.Name)
				}
			}
		}
		b.WriteString("    end\n")
	}
	var out strings.Builder
	out.WriteString("graph LR\n  classDef deprecated fill:#E8960F\n")
	names := make([]string, 0, len(pkgs))
	for n := range pkgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&out, "  %%%% package %q\n  subgraph %q\n%s  end\n", n, n, pkgs[n].String())
	}
	if deprecatedPkg != "" {
		fmt.Fprintf(&out, "style %s fill:#989695\n", deprecatedPkg)
	}
	for _, id := range deprecatedChans {
		fmt.Fprintf(&out, "style %s fill:#DCD0FF\n", id)
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// deprecated lists what the catalog's olm.deprecations blobs deprecate: packages, channels and bundles by
// name.
func deprecated(c *catalog.Catalog) (pkgs, chans, bundles map[string]bool) {
	pkgs, chans, bundles = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, d := range c.Deprecations {
		for _, e := range d.Entries {
			switch e.Reference.Schema {
			case catalog.SchemaPackage:
				pkgs[d.Package] = true
			case catalog.SchemaChannel:
				chans[e.Reference.Name] = true
			case catalog.SchemaBundle:
				bundles[e.Reference.Name] = true
			}
		}
	}
	return pkgs, chans, bundles
}
