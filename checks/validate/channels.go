package validate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
)

func (v *validator) channels() {
	for _, c := range v.c.Channels {
		ps := v.pkgs[c.Package]
		switch {
		case ps == nil:
			v.add(c.Pos, "channel-unknown-package", c.Package, c.Name, "",
				fmt.Sprintf("channel %q belongs to package %q, which has no olm.package blob", c.Name, c.Package),
				"add the olm.package blob, or fix the channel's \"package\"")
			continue
		case c.Name == "":
			v.add(c.Pos, "channel-no-name", c.Package, "", "",
				fmt.Sprintf("an olm.channel blob of package %q has no name", c.Package), "set \"name\"")
			continue
		case ps.channels[c.Name] != nil:
			first := ps.channels[c.Name].Pos
			v.add(c.Pos, "channel-duplicate", c.Package, c.Name, "",
				fmt.Sprintf("package %q declares channel %q twice (first at %s:%d)", c.Package, c.Name, first.File, first.Line),
				"merge the two olm.channel blobs")
			continue
		}
		if ps.channels == nil {
			ps.channels, ps.inChannels = map[string]*catalog.Channel{}, map[string][]*catalog.Channel{}
		}
		ps.channels[c.Name] = c
		ps.chOrder = append(ps.chOrder, c)
		seen := map[string]bool{}
		for _, e := range c.Entries {
			if seen[e.Name] {
				v.add(e.Pos, "channel-duplicate-entry", c.Package, c.Name, e.Name,
					fmt.Sprintf("channel %q of package %q lists bundle %q twice", c.Name, c.Package, e.Name),
					"keep one entry per bundle")
				continue
			}
			seen[e.Name] = true
			ps.inChannels[e.Name] = append(ps.inChannels[e.Name], c)
		}
	}
}

// channelEntries checks that every entry has its bundle, that skips are not empty and skipRanges parse.
func (v *validator) channelEntries() {
	for _, ps := range v.pkgOrder {
		for _, c := range ps.chOrder {
			for _, e := range c.Entries {
				if ps.bundles[e.Name] == nil {
					v.add(e.Pos, "channel-entry-without-bundle", c.Package, c.Name, e.Name,
						fmt.Sprintf("channel %q of package %q lists bundle %q, but there is no olm.bundle blob named %q in that package", c.Name, c.Package, e.Name, e.Name),
						"add the bundle (e.g. render its image), or remove the entry")
				}
				for i, s := range e.Skips {
					if s == "" {
						v.add(e.Pos, "bundle-skip-empty", c.Package, c.Name, e.Name,
							fmt.Sprintf("entry %q of channel %q: skips[%d] is empty", e.Name, c.Name, i), "remove the empty skip")
					}
				}
				if e.SkipRange != "" {
					if _, err := semver.ParseRange(e.SkipRange); err != nil {
						v.add(e.Pos, "skiprange-bad", c.Package, c.Name, e.Name,
							fmt.Sprintf("entry %q of channel %q: skipRange %q does not parse: %v", e.Name, c.Name, e.SkipRange, err),
							"use a semver range such as \">=1.0.0 <1.2.0\" (no \"v\" prefix)")
					}
				}
			}
		}
	}
}

// graphs checks each channel's upgrade graph: one head, no replaces cycle, nothing stranded.
func (v *validator) graphs() {
	for _, ps := range v.pkgOrder {
		for _, c := range ps.chOrder {
			if len(c.Entries) == 0 {
				v.add(c.Pos, "channel-empty-entries", c.Package, c.Name, "",
					fmt.Sprintf("channel %q of package %q has no entries", c.Name, c.Package),
					"add at least one bundle to the channel, or remove the channel")
				continue
			}
			g := catalog.NewGraph(c)
			heads := g.Heads()
			switch {
			case len(heads) == 0:
				v.add(c.Pos, "channel-no-head", c.Package, c.Name, "",
					fmt.Sprintf("channel %q of package %q has no head: every entry is replaced or skipped by another (%s)", c.Name, c.Package, g.DescribeCycle()),
					"the newest bundle must not be the target of any replaces or skips; break the cycle")
				continue
			case len(heads) > 1:
				v.add(c.Pos, "channel-multiple-heads", c.Package, c.Name, "",
					fmt.Sprintf("channel %q of package %q has %d heads: %s; exactly one entry may be un-replaced and un-skipped", c.Name, c.Package, len(heads), strings.Join(heads, ", ")),
					"make the newest bundle replace (or skip) the other heads")
				continue
			}
			chain, cycle := g.ReplacesChain(heads[0])
			if cycle != nil {
				v.add(g.Entry(cycle[0]).Pos, "channel-replaces-cycle", c.Package, c.Name, cycle[0],
					fmt.Sprintf("channel %q of package %q has a cycle in its replaces chain: %s", c.Name, c.Package, strings.Join(cycle, " -> ")),
					"fix the replaces fields so the chain ends")
				continue
			}
			if stranded := g.Stranded(chain); len(stranded) > 0 {
				sort.Strings(stranded)
				for _, s := range stranded {
					v.add(g.Entry(s).Pos, "channel-stranded-bundle", c.Package, c.Name, s,
						fmt.Sprintf("bundle %q in channel %q of package %q is stranded: it is not on the replaces chain from head %q and nothing skips it", s, c.Name, c.Package, heads[0]),
						"make a bundle on the chain replace or skip it, or remove the entry")
				}
			}
		}
	}
}
