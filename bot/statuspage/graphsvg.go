package statuspage

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/catalogbot/catalogbot/report"
)

// The run page draws a stage's upgrade graphs (report.Stage.Graphs) as inline SVG: the page runs offline
// under a CSP that allows no script, so a mermaid renderer from a CDN is not an option. The details show
// each graph as its mermaid block (report.UpgradeGraph.Mermaid, for GitHub's renderers): the drawing
// takes the block's place, and the text around it stays preformatted. Nothing is read back from the text.

// detailPart is a piece of a stage's details: Text, or an upgrade graph drawn as SVG.
type detailPart struct {
	Text string
	SVG  template.HTML
}

// Bounds on what one graph may cost to draw: the details come from a pull request's catalog.
const (
	maxGraphNodes = 300
	maxGraphEdges = 2000
	maxLabelRunes = 80
)

// detailParts splits a stage's details at its graphs' mermaid blocks and draws each graph in its block's
// place; a graph too large to draw leaves its block as text, saying why, and a graph whose block the
// details do not hold is drawn after them.
func detailParts(st report.Stage) []detailPart {
	var parts, after []detailPart
	text := func(s string) {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, detailPart{Text: strings.Trim(s, "\n")})
		}
	}
	rest := st.Details
	for _, g := range st.Graphs {
		block := g.Mermaid()
		before, tail, ok := strings.Cut(rest, block)
		if !ok {
			after = append(after, drawing(g, block))
			continue
		}
		text(before)
		parts = append(parts, drawing(g, block))
		rest = tail
	}
	text(rest)
	return append(parts, after...)
}

// drawing is the graph as SVG, or its mermaid block and why it is not drawn.
func drawing(rg report.UpgradeGraph, block string) detailPart {
	g, err := newUpgradeGraph(rg)
	if err != nil {
		return detailPart{Text: strings.TrimSuffix(block, "\n") + "\n(not drawn: " + err.Error() + ")"}
	}
	return detailPart{SVG: g.svg()}
}

type graphNode struct {
	label       string
	added, head bool
	layer, slot int
}

type graphEdge struct {
	from, to int // from is replaced or skipped by to: the upgrade goes from -> to
	skip     bool
}

type upgradeGraph struct {
	nodes []graphNode
	edges []graphEdge
}

// newUpgradeGraph lays the graph out for drawing, within the bounds.
func newUpgradeGraph(rg report.UpgradeGraph) (*upgradeGraph, error) {
	switch {
	case len(rg.Nodes) == 0:
		return nil, fmt.Errorf("no entries")
	case len(rg.Nodes) > maxGraphNodes:
		return nil, fmt.Errorf("more than %d entries", maxGraphNodes)
	case len(rg.Edges) > maxGraphEdges:
		return nil, fmt.Errorf("more than %d edges", maxGraphEdges)
	}
	g := &upgradeGraph{nodes: make([]graphNode, len(rg.Nodes)), edges: make([]graphEdge, len(rg.Edges))}
	for i, n := range rg.Nodes {
		g.nodes[i] = graphNode{label: n.Label(), added: n.Added, head: n.Head}
	}
	for i, e := range rg.Edges {
		if e.From < 0 || e.From >= len(g.nodes) || e.To < 0 || e.To >= len(g.nodes) {
			return nil, fmt.Errorf("edge %d names no entry", i)
		}
		g.edges[i] = graphEdge{from: e.From, to: e.To, skip: e.Kind == report.Skips}
	}
	g.layout()
	return g, nil
}

// layout puts each node in the layer of its longest upgrade path from a node nothing upgrades from
// (oldest at the bottom, the newest at the top), slots in definition order within a layer. An edge
// closing a cycle (an invalid channel) does not count.
func (g *upgradeGraph) layout() {
	in := make([][]int, len(g.nodes)) // in[to] lists from
	for _, e := range g.edges {
		in[e.to] = append(in[e.to], e.from)
	}
	const visiting, done = 1, 2
	state := make([]int, len(g.nodes))
	var depth func(i int) int
	depth = func(i int) int {
		switch state[i] {
		case visiting:
			return -1
		case done:
			return g.nodes[i].layer
		}
		state[i] = visiting
		layer := 0
		for _, f := range in[i] {
			if d := depth(f); d >= 0 {
				layer = max(layer, d+1)
			}
		}
		state[i], g.nodes[i].layer = done, layer
		return layer
	}
	slots := map[int]int{}
	for i := range g.nodes {
		depth(i)
	}
	for i := range g.nodes {
		g.nodes[i].slot = slots[g.nodes[i].layer]
		slots[g.nodes[i].layer]++
	}
}

// Drawing constants, in SVG user units (pixels at 1:1). Labels use a monospace font, so their width is
// known from their length.
const (
	charWidth = 7.3
	nodeH     = 28.0
	padX      = 10.0
	gapX      = 24.0
	gapY      = 22.0
	margin    = 8.0
	arrow     = 7.0
	maxLanes  = 60
)

// box is where a node is drawn.
type box struct{ x, y, w float64 }

// svg draws the graph, newest at the top: an edge between adjacent layers goes straight up from the
// older bundle to the newer; a longer one (a skip, mostly) arcs out to the right of every bundle between
// them, in a lane of its own. Every label is escaped; nothing else in it comes from the catalog.
func (g *upgradeGraph) svg() template.HTML {
	labels := make([]string, len(g.nodes))
	layers := 0
	for i, n := range g.nodes {
		labels[i] = n.label
		if utf8.RuneCountInString(labels[i]) > maxLabelRunes {
			labels[i] = string([]rune(labels[i])[:maxLabelRunes-1]) + "…"
		}
		layers = max(layers, n.layer+1)
	}
	boxes := make([]box, len(g.nodes))
	rowEnd := make([]float64, layers) // right edge of each layer's last node
	for i, n := range g.nodes {
		w := float64(utf8.RuneCountInString(labels[i]))*charWidth + 2*padX
		x := margin
		if n.slot > 0 {
			x = rowEnd[n.layer] + gapX
		}
		boxes[i] = box{x: x, y: margin + float64(layers-1-n.layer)*(nodeH+gapY), w: w}
		rowEnd[n.layer] = x + w
	}
	width := margin
	for _, r := range rowEnd {
		width = max(width, r+margin)
	}
	// Each arcing edge gets its own lane, shorter spans inside longer ones, so parallel skips stay apart.
	lane := map[int]int{}
	var long []int
	for i, e := range g.edges {
		if g.nodes[e.to].layer-g.nodes[e.from].layer != 1 {
			long = append(long, i)
		}
	}
	span := func(i int) int { return abs(g.nodes[g.edges[i].to].layer - g.nodes[g.edges[i].from].layer) }
	slices.SortStableFunc(long, func(a, b int) int { return span(a) - span(b) })
	for k, i := range long {
		lane[i] = min(k, maxLanes)
	}
	var edges strings.Builder
	for ei, e := range g.edges {
		f, t := boxes[e.from], boxes[e.to]
		lo, hi := min(g.nodes[e.from].layer, g.nodes[e.to].layer), max(g.nodes[e.from].layer, g.nodes[e.to].layer)
		class, dash := "replaces", ""
		if e.skip {
			class, dash = "skips", ` stroke-dasharray="5 4"`
		}
		var d string
		var tipX, tipY, dirX, dirY float64
		if hi-lo == 1 && g.nodes[e.to].layer > g.nodes[e.from].layer {
			sx, sy := f.x+f.w/2, f.y
			tipX, tipY = t.x+t.w/2, t.y+nodeH
			dirX, dirY = tipX-sx, tipY-sy
			ex, ey := back(tipX, tipY, dirX, dirY)
			d = fmt.Sprintf("M%.1f %.1f L%.1f %.1f", sx, sy, ex, ey)
		} else {
			right := 0.0
			for i, n := range g.nodes {
				if n.layer >= lo && n.layer <= hi {
					right = max(right, boxes[i].x+boxes[i].w)
				}
			}
			bulge := right + 12 + 6*float64(lane[ei])
			sx, sy := f.x+f.w, f.y+nodeH/2
			tipX, tipY = t.x+t.w, t.y+nodeH/2
			dirX, dirY = -1, 0
			d = fmt.Sprintf("M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f", sx, sy, bulge, sy, bulge, tipY, tipX+arrow, tipY)
			width = max(width, bulge+margin)
		}
		fmt.Fprintf(&edges, `<path class="edge %s" d="%s" fill="none" stroke="#57606a" stroke-width="1.5"%s/>`, class, d, dash)
		edges.WriteString(arrowHead(tipX, tipY, dirX, dirY))
	}
	height := margin*2 + float64(layers)*nodeH + float64(layers-1)*gapY
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="graph" xmlns="http://www.w3.org/2000/svg" role="img" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`, width, height, width, height)
	b.WriteString(`<title>upgrade graph, newest at the top: arrows go from a bundle to the one that replaces (solid) or skips (dashed) it</title>`)
	b.WriteString(edges.String())
	for i, n := range g.nodes {
		bx := boxes[i]
		fill, stroke, strokeW, class := "#ffffff", "#8c959f", 1.0, "node"
		if n.added {
			fill, stroke, class = "#d4f8d4", "#2da44e", class+" added"
		}
		if n.head {
			strokeW, class = 2.5, class+" head"
		}
		fmt.Fprintf(&b, `<g class="%s"><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="4" fill="%s" stroke="%s" stroke-width="%.1f"/>`,
			class, bx.x, bx.y, bx.w, nodeH, fill, stroke, strokeW)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-family="ui-monospace,monospace" font-size="12" fill="#1f2328">%s</text>`,
			bx.x+padX, bx.y+nodeH/2+4, html.EscapeString(labels[i]))
		if n.label != labels[i] || n.head {
			title := n.label
			if n.head {
				title += " (channel head)"
			}
			fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
		}
		b.WriteString(`</g>`)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // built above; every catalog string is escaped
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// back is the point an arrow's length before (x, y) along direction (dx, dy): where its line stops.
func back(x, y, dx, dy float64) (float64, float64) {
	l := math.Hypot(dx, dy)
	if l == 0 {
		return x, y
	}
	return x - dx/l*arrow, y - dy/l*arrow
}

// arrowHead is a triangle with its tip at (x, y) pointing along (dx, dy).
func arrowHead(x, y, dx, dy float64) string {
	l := math.Hypot(dx, dy)
	if l == 0 {
		dx, dy, l = 0, -1, 1
	}
	ux, uy := dx/l, dy/l
	bx, by := x-ux*arrow, y-uy*arrow
	return fmt.Sprintf(`<path d="M%.1f %.1f L%.1f %.1f L%.1f %.1f Z" fill="#57606a"/>`, x, y, bx-uy*4, by+ux*4, bx+uy*4, by-ux*4)
}
