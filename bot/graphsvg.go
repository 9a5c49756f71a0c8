package bot

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// The run page draws a stage's upgrade graphs as inline SVG, made here from the mermaid blocks that
// checks/graph.Mermaid writes into the stage's details: the page runs offline under a CSP that allows no
// script, so a mermaid renderer from a CDN is not an option. Text around the blocks stays preformatted.

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

var (
	mermaidNode  = regexp.MustCompile(`^  (n[0-9]+)\["(.*)"\]$`)
	mermaidEdge  = regexp.MustCompile(`^  (n[0-9]+) (-->|-\.->\|skips\|) (n[0-9]+)$`)
	mermaidStyle = regexp.MustCompile(`^  style (n[0-9]+) fill:#d4f8d4,stroke:#2da44e$`)
)

// detailParts splits details at its mermaid blocks and draws each one it can read; a block it cannot
// read (not the shape checks/graph writes, or too large) stays text.
func detailParts(details string) []detailPart {
	var parts []detailPart
	text := func(s string) {
		if strings.TrimSpace(s) != "" {
			parts = append(parts, detailPart{Text: strings.Trim(s, "\n")})
		}
	}
	const open, fence = "```mermaid\n", "```\n"
	rest := details
	for {
		before, after, ok := strings.Cut(rest, open)
		if !ok {
			text(rest)
			return parts
		}
		block, tail, closed := strings.Cut(after, fence)
		if !closed {
			text(rest)
			return parts
		}
		text(before)
		if g, err := parseMermaid(block); err == nil {
			parts = append(parts, detailPart{SVG: g.svg()})
		} else {
			parts = append(parts, detailPart{Text: strings.TrimSuffix(open+block+fence, "\n") + "\n(not drawn: " + err.Error() + ")"})
		}
		rest = tail
	}
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

// parseMermaid reads the body of a mermaid block as checks/graph.Mermaid writes it ("graph LR", node
// definitions, "a --> b" for b replaced by a, "a -.->|skips| b", style lines for added entries).
func parseMermaid(block string) (*upgradeGraph, error) {
	lines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
	if len(lines) == 0 || lines[0] != "graph LR" {
		return nil, fmt.Errorf("not an upgrade graph")
	}
	g := &upgradeGraph{}
	ids := map[string]int{}
	node := func(id string) (int, error) {
		i, ok := ids[id]
		if !ok {
			return 0, fmt.Errorf("edge to undefined node %s", id)
		}
		return i, nil
	}
	for n, l := range lines[1:] {
		switch {
		case mermaidNode.MatchString(l):
			m := mermaidNode.FindStringSubmatch(l)
			if _, dup := ids[m[1]]; dup {
				return nil, fmt.Errorf("line %d: node %s defined twice", n+2, m[1])
			}
			if len(g.nodes) == maxGraphNodes {
				return nil, fmt.Errorf("more than %d entries", maxGraphNodes)
			}
			label, head := strings.CutSuffix(m[2], " (head)")
			ids[m[1]] = len(g.nodes)
			g.nodes = append(g.nodes, graphNode{label: label, head: head})
		case mermaidEdge.MatchString(l):
			m := mermaidEdge.FindStringSubmatch(l)
			newer, err := node(m[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+2, err)
			}
			older, err := node(m[3])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+2, err)
			}
			if len(g.edges) == maxGraphEdges {
				return nil, fmt.Errorf("more than %d edges", maxGraphEdges)
			}
			g.edges = append(g.edges, graphEdge{from: older, to: newer, skip: m[2] != "-->"})
		case mermaidStyle.MatchString(l):
			i, err := node(mermaidStyle.FindStringSubmatch(l)[1])
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", n+2, err)
			}
			g.nodes[i].added = true
		default:
			return nil, fmt.Errorf("line %d is not part of an upgrade graph", n+2)
		}
	}
	if len(g.nodes) == 0 {
		return nil, fmt.Errorf("no entries")
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
