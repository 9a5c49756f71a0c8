package statuspage

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/graph"
	"github.com/catalogbot/catalogbot/report"
)

// channel is a channel of package foo whose entries are "name<replaces" or "name<replaces~skip~skip".
func channel(entries ...string) *catalog.Channel {
	c := &catalog.Channel{Package: "foo", Name: "stable"}
	for _, e := range entries {
		name, rest, _ := strings.Cut(e, "<")
		replaces, skips, _ := strings.Cut(rest, "~")
		ce := catalog.ChannelEntry{Name: name, Replaces: replaces}
		if skips != "" {
			ce.Skips = strings.Split(skips, "~")
		}
		c.Entries = append(c.Entries, ce)
	}
	return c
}

// graphStage is a graph stage whose details show the channel's graph, between before and after.
func graphStage(before string, ch *catalog.Channel, d graph.ChannelDiff, after string) report.Stage {
	g := graph.UpgradeGraph(ch, d)
	return report.Stage{Name: "graph", Details: before + g.Mermaid() + after, Graphs: []report.UpgradeGraph{g}}
}

// svgNodes maps each drawn node's label to its rectangle's y and its classes.
func svgNodes(t *testing.T, svg string) map[string][2]string {
	t.Helper()
	re := regexp.MustCompile(`<g class="([^"]*)"><rect x="[0-9.]+" y="([0-9.]+)"[^>]*/><text[^>]*>([^<]*)</text>`)
	out := map[string][2]string{}
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		out[m[3]] = [2]string{m[2], m[1]}
	}
	return out
}

// The graph checks/graph writes into a stage's details is drawn, not shown as mermaid source: every
// entry a box, older bundles below the ones that replace them, replaces solid, skips dashed, the
// added entry green and the head marked; the text around the block stays.
func TestDetailPartsDrawsTheUpgradeGraph(t *testing.T) {
	ch := channel("foo.v1<", "foo.v2<foo.v1", "foo.v3<foo.v2~foo.v1")
	d := graph.ChannelDiff{Package: "foo", Channel: "stable", OldHead: "foo.v2", NewHead: "foo.v3", AddedEntries: []string{"foo.v3"}}
	parts := detailParts(graphStage("#### foo / stable\n\n- head: `foo.v2` → `foo.v3`\n\n", ch, d, "\nafter\n"))
	if len(parts) != 3 || parts[0].Text == "" || parts[1].SVG == "" || parts[2].Text != "after" {
		t.Fatalf("parts: %+v", parts)
	}
	if !strings.Contains(parts[0].Text, "foo / stable") || strings.Contains(string(parts[1].SVG), "mermaid") {
		t.Errorf("parts: %+v", parts)
	}
	svg := string(parts[1].SVG)
	nodes := svgNodes(t, svg)
	if len(nodes) != 3 {
		t.Fatalf("nodes %v in\n%s", nodes, svg)
	}
	y := func(n string) float64 { v, _ := strconv.ParseFloat(nodes[n][0], 64); return v }
	if !(y("foo.v1") > y("foo.v2") && y("foo.v2") > y("foo.v3")) {
		t.Errorf("layers: %v", nodes)
	}
	if nodes["foo.v3"][1] != "node added head" || nodes["foo.v1"][1] != "node" {
		t.Errorf("classes: %v", nodes)
	}
	if n := strings.Count(svg, `class="edge replaces"`); n != 2 {
		t.Errorf("%d replaces edges, want 2", n)
	}
	if n := strings.Count(svg, `class="edge skips"`); n != 1 || !strings.Contains(svg, `stroke-dasharray`) {
		t.Errorf("%d skips edges, want 1 dashed", n)
	}
}

// Entries come from a pull request's catalog: a hostile name is escaped in the drawing, a name that
// breaks the block's lines or a graph past the bounds is shown as text (the page escapes it), an
// invalid channel (a replaces cycle) is still drawn, and a very long name is cut.
func TestDetailPartsHostileGraphs(t *testing.T) {
	evil := `x"><script>alert(1)</script><g a="`
	t.Run("markup in names", func(t *testing.T) {
		parts := detailParts(graphStage("", channel(evil+"<", "foo.v2<"+evil), graph.ChannelDiff{NewHead: "foo.v2"}, ""))
		if len(parts) != 1 || parts[0].SVG == "" {
			t.Fatalf("parts: %+v", parts)
		}
		svg := string(parts[0].SVG)
		if strings.Contains(svg, "<script") || !strings.Contains(svg, "&lt;script&gt;") {
			t.Errorf("not escaped:\n%s", svg)
		}
	})
	t.Run("newline in a name", func(t *testing.T) {
		// The graph writer escapes the line break (report's label escape): still two bundles, one edge,
		// and the injected "n0 --> n0" is a name's text, not an edge.
		parts := detailParts(graphStage("", channel("foo.v1<", "foo\n  n0 --> n0\nv2<foo.v1"), graph.ChannelDiff{}, ""))
		if len(parts) != 1 || parts[0].SVG == "" {
			t.Fatalf("parts: %+v", parts)
		}
		svg := string(parts[0].SVG)
		if n := len(svgNodes(t, svg)); n != 2 || strings.Count(svg, `class="edge`) != 1 {
			t.Errorf("%d nodes, %d edges, want 2 and 1:\n%s", n, strings.Count(svg, `class="edge`), svg)
		}
	})
	t.Run("a stored graph with an edge to no entry", func(t *testing.T) {
		st := graphStage("", channel("foo.v1<", "foo.v2<foo.v1"), graph.ChannelDiff{}, "")
		st.Graphs[0].Edges[0].From = 2
		st.Details = st.Graphs[0].Mermaid()
		parts := detailParts(st)
		if len(parts) != 1 || parts[0].SVG != "" || !strings.Contains(parts[0].Text, "(not drawn: edge 0 names no entry)") {
			t.Errorf("parts: %+v", parts)
		}
	})
	t.Run("mermaid text is not read", func(t *testing.T) {
		// Details are output only: a block in them without its graph stays text, however well formed.
		st := graphStage("", channel("foo.v1<", "foo.v2<foo.v1"), graph.ChannelDiff{}, "")
		st.Graphs = nil
		parts := detailParts(st)
		if len(parts) != 1 || parts[0].SVG != "" || !strings.Contains(parts[0].Text, "n1 --> n0") {
			t.Errorf("parts: %+v", parts)
		}
	})
	t.Run("too many entries", func(t *testing.T) {
		var entries []string
		for i := range maxGraphNodes + 1 {
			entries = append(entries, fmt.Sprintf("foo.v%d<foo.v%d", i+1, i))
		}
		parts := detailParts(graphStage("", channel(entries...), graph.ChannelDiff{}, ""))
		if len(parts) != 1 || parts[0].SVG != "" || !strings.Contains(parts[0].Text, fmt.Sprintf("more than %d entries", maxGraphNodes)) {
			t.Errorf("parts: %d, %.200q", len(parts), parts[0].Text)
		}
	})
	t.Run("replaces cycle", func(t *testing.T) {
		parts := detailParts(graphStage("", channel("a<b", "b<c", "c<a"), graph.ChannelDiff{}, ""))
		if len(parts) != 1 || len(svgNodes(t, string(parts[0].SVG))) != 3 {
			t.Errorf("parts: %+v", parts)
		}
	})
	t.Run("long name", func(t *testing.T) {
		long := strings.Repeat("ä", 500)
		svg := string(detailParts(graphStage("", channel(long+"<"), graph.ChannelDiff{}, ""))[0].SVG)
		if _, ok := svgNodes(t, svg)[strings.Repeat("ä", maxLabelRunes-1)+"…"]; !ok || !strings.Contains(svg, "<title>"+long+"</title>") {
			t.Errorf("long label not cut to %d runes with the full name as its title:\n%s", maxLabelRunes, svg)
		}
	})
	t.Run("unclosed block", func(t *testing.T) {
		parts := detailParts(report.Stage{Details: "before\n```mermaid\ngraph LR\n  n0[\"a\"]\n"})
		if len(parts) != 1 || parts[0].SVG != "" || !strings.Contains(parts[0].Text, "```mermaid") {
			t.Errorf("parts: %+v", parts)
		}
	})
}
