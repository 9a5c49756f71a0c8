package graph

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// ChannelDiff is what a change did to one channel's upgrade graph.
type ChannelDiff struct {
	Package, Channel string
	New              bool // the channel did not exist before
	Removed          bool // the channel is gone
	OldHead, NewHead string
	AddedEntries     []string
	RemovedEntries   []string
	AddedEdges       []string
	RemovedEdges     []string
}

// Changed reports whether anything in the channel changed.
func (d ChannelDiff) Changed() bool {
	return d.New || d.Removed || d.OldHead != d.NewHead || len(d.AddedEntries)+len(d.RemovedEntries)+len(d.AddedEdges)+len(d.RemovedEdges) > 0
}

// DiffGraphs compares the channels and bundles of the given packages between two catalogs. Released
// bundles (present in base) that were removed or modified are errors unless allowModify is set: bundles
// are immutable once published, as the OLM docs recommend. A diagnostic names its file under its
// catalog's Dir.
func DiffGraphs(base, head *catalog.Catalog, pkgs map[string]bool, allowModify bool) ([]ChannelDiff, []diag.Diagnostic) {
	var diffs []ChannelDiff
	var ds []diag.Diagnostic
	baseCh, headCh := channelsByKey(base, pkgs), channelsByKey(head, pkgs)
	keys := map[string]bool{}
	for k := range baseCh {
		keys[k] = true
	}
	for k := range headCh {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		b, h := baseCh[k], headCh[k]
		d := ChannelDiff{}
		switch {
		case b == nil:
			d = diffChannel(&catalog.Channel{Package: h.Package, Name: h.Name}, h)
			d.New = true
		case h == nil:
			d = diffChannel(b, &catalog.Channel{Package: b.Package, Name: b.Name})
			d.Removed = true
		default:
			d = diffChannel(b, h)
		}
		if d.Changed() {
			diffs = append(diffs, d)
		}
	}
	severity := diag.Error
	if allowModify {
		severity = diag.Warning
	}
	hb := bundlesByKey(head, pkgs)
	bb := bundlesByKey(base, pkgs)
	for _, k := range sortedKeys(bb) {
		old := bb[k]
		nb, ok := hb[k]
		if !ok {
			ds = append(ds, diag.Diagnostic{Severity: severity, Check: "graph", Rule: "released-bundle-removed",
				File: base.Dir.File(old.Pos.File), Package: old.Package, Bundle: old.Name,
				Message: fmt.Sprintf("released bundle %q of package %q was removed", old.Name, old.Package),
				Hint:    "published bundles are immutable: deprecate it (olm.deprecations) instead of removing it, or set graph.allowModifyReleased in .catalogbot.yaml"})
			continue
		}
		if what := BundleChange(old, nb); what != "" {
			ds = append(ds, diag.Diagnostic{Severity: severity, Check: "graph", Rule: "released-bundle-modified",
				File: head.Dir.File(nb.Pos.File), Line: nb.Pos.Line, Column: nb.Pos.Column, Package: nb.Package, Bundle: nb.Name,
				Message: fmt.Sprintf("released bundle %q of package %q was modified (%s)", nb.Name, nb.Package, what),
				Hint:    "publish a new bundle version instead of changing a released one, or set graph.allowModifyReleased in .catalogbot.yaml"})
		}
	}
	return diffs, ds
}

func channelsByKey(c *catalog.Catalog, pkgs map[string]bool) map[string]*catalog.Channel {
	out := map[string]*catalog.Channel{}
	if c == nil {
		return out
	}
	for _, ch := range c.Channels {
		if pkgs[ch.Package] {
			out[ch.Package+"/"+ch.Name] = ch
		}
	}
	return out
}

func bundlesByKey(c *catalog.Catalog, pkgs map[string]bool) map[string]*catalog.Bundle {
	out := map[string]*catalog.Bundle{}
	if c == nil {
		return out
	}
	for _, b := range c.Bundles {
		if pkgs[b.Package] {
			out[b.Package+"/"+b.Name] = b
		}
	}
	return out
}

func edges(c *catalog.Channel) map[string]bool {
	out := map[string]bool{}
	for _, e := range c.Entries {
		if e.Replaces != "" {
			out[e.Name+" replaces "+e.Replaces] = true
		}
		for _, s := range e.Skips {
			out[e.Name+" skips "+s] = true
		}
		if e.SkipRange != "" {
			out[e.Name+" skipRange "+e.SkipRange] = true
		}
	}
	return out
}

func diffChannel(b, h *catalog.Channel) ChannelDiff {
	d := ChannelDiff{Package: h.Package, Channel: h.Name}
	if len(b.Entries) > 0 {
		d.OldHead = catalog.NewGraph(b).Head()
	}
	if len(h.Entries) > 0 {
		d.NewHead = catalog.NewGraph(h).Head()
	}
	be, he := map[string]bool{}, map[string]bool{}
	for _, e := range b.Entries {
		be[e.Name] = true
	}
	for _, e := range h.Entries {
		he[e.Name] = true
	}
	d.AddedEntries, d.RemovedEntries = setDiff(he, be), setDiff(be, he)
	bed, hed := edges(b), edges(h)
	d.AddedEdges, d.RemovedEdges = setDiff(hed, bed), setDiff(bed, hed)
	return d
}

func setDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BundleChange says what differs between two versions of a bundle ("" when nothing does).
func BundleChange(a, b *catalog.Bundle) string {
	var what []string
	if a.Image != b.Image {
		what = append(what, fmt.Sprintf("image %s -> %s", a.Image, b.Image))
	}
	if !slices.Equal(a.RelatedImages, b.RelatedImages) {
		what = append(what, "relatedImages")
	}
	if !sameProperties(a.Properties, b.Properties) {
		what = append(what, "properties")
	}
	return strings.Join(what, ", ")
}

func sameProperties(a, b []catalog.Property) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || !bytes.Equal(compact(a[i].Value), compact(b[i].Value)) {
			return false
		}
	}
	return true
}

func compact(v []byte) []byte {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return v
	}
	return buf.Bytes()
}

// UpgradeGraph is a changed channel's upgrade graph: its entries and the bundles they replace or skip,
// the entries the change added and the new head marked.
func UpgradeGraph(c *catalog.Channel, d ChannelDiff) report.UpgradeGraph {
	g := report.UpgradeGraph{Package: c.Package, Channel: c.Name}
	added := map[string]bool{}
	for _, n := range d.AddedEntries {
		added[n] = true
	}
	ids := map[string]int{}
	id := func(name string, external bool) int {
		if i, ok := ids[name]; ok {
			return i
		}
		ids[name] = len(g.Nodes)
		g.Nodes = append(g.Nodes, report.GraphNode{Name: name, External: external, Added: added[name], Head: name == d.NewHead})
		return ids[name]
	}
	for _, e := range c.Entries {
		id(e.Name, false)
	}
	for _, e := range c.Entries {
		if e.Replaces != "" {
			g.Edges = append(g.Edges, report.GraphEdge{To: id(e.Name, false), From: id(e.Replaces, true), Kind: report.Replaces})
		}
		for _, s := range e.Skips {
			g.Edges = append(g.Edges, report.GraphEdge{To: id(e.Name, false), From: id(s, true), Kind: report.Skips})
		}
	}
	return g
}

// GraphDetails describes channel diffs for the report's details, each changed channel of head drawn as
// its graph's mermaid block, and returns those graphs in the order of their blocks (report.Stage.Graphs:
// the run page draws them in the blocks' places).
func GraphDetails(head *catalog.Catalog, diffs []ChannelDiff) (string, []report.UpgradeGraph) {
	var b strings.Builder
	var graphs []report.UpgradeGraph
	for _, d := range diffs {
		state := ""
		switch {
		case d.New:
			state = " (new channel)"
		case d.Removed:
			state = " (removed)"
		}
		fmt.Fprintf(&b, "#### %s / %s%s\n\n", report.Text(d.Package), report.Text(d.Channel), state)
		if d.OldHead != d.NewHead {
			fmt.Fprintf(&b, "- head: %s → %s\n", spanOrNone(d.OldHead), spanOrNone(d.NewHead))
		}
		for _, l := range [][2]any{{"added entries", d.AddedEntries}, {"removed entries", d.RemovedEntries}, {"added edges", d.AddedEdges}, {"removed edges", d.RemovedEdges}} {
			if list := l[1].([]string); len(list) > 0 {
				spans := make([]string, len(list))
				for i, n := range list {
					spans[i] = report.CodeSpan(n)
				}
				fmt.Fprintf(&b, "- %s: %s\n", l[0], strings.Join(spans, ", "))
			}
		}
		if !d.Removed && head != nil {
			for _, c := range head.Channels {
				if c.Package == d.Package && c.Name == d.Channel {
					g := UpgradeGraph(c, d)
					b.WriteString("\n" + g.Mermaid())
					graphs = append(graphs, g)
					break
				}
			}
		}
		b.WriteString("\n")
	}
	return b.String(), graphs
}

func spanOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return report.CodeSpan(s)
}
