package bot

import (
	"fmt"
	"html"
	"html/template"
	"regexp"
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
	layer, row  int
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

// layout puts each node in the column of its longest upgrade path from a node nothing upgrades from
// (oldest on the left), rows in definition order within a column. An edge closing a cycle (an invalid
// channel) does not count.
func (g *upgradeGraph) layout() {
	in := make([][]int, len(g.nodes)) // in[to] lists from
	for _, e := range g.edges {
		in[e.to] = append(in[e.to], e.from)
	}
	const unseen, visiting, done = 0, 1, 2
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
	rows := map[int]int{}
	for i := range g.nodes {
		depth(i)
	}
	for i := range g.nodes {
		g.nodes[i].row = rows[g.nodes[i].layer]
		rows[g.nodes[i].layer]++
	}
}

// Drawing constants, in SVG user units (pixels at 1:1). Labels use a monospace font, so their width is
// known from their length.
const (
	charWidth = 7.3
	nodeH     = 28.0
	padX      = 10.0
	gapX      = 56.0
	gapY      = 14.0
	margin    = 8.0
)

// svg draws the graph. Every label is escaped; nothing else in it comes from the catalog.
func (g *upgradeGraph) svg() template.HTML {
	labels := make([]string, len(g.nodes))
	layers := 0
	colW := map[int]float64{}
	rows := 0
	for i, n := range g.nodes {
		labels[i] = n.label
		if utf8.RuneCountInString(labels[i]) > maxLabelRunes {
			labels[i] = string([]rune(labels[i])[:maxLabelRunes-1]) + "…"
		}
		w := float64(utf8.RuneCountInString(labels[i]))*charWidth + 2*padX
		colW[n.layer] = max(colW[n.layer], w)
		layers = max(layers, n.layer+1)
		rows = max(rows, n.row+1)
	}
	colX := make([]float64, layers+1)
	colX[0] = margin
	for l := range layers {
		colX[l+1] = colX[l] + colW[l] + gapX
	}
	lift := func(e graphEdge) float64 {
		if span := g.nodes[e.to].layer - g.nodes[e.from].layer; span != 1 || g.nodes[e.to].row != g.nodes[e.from].row {
			return 14 * float64(max(span, 1))
		}
		return 0
	}
	top := margin
	for _, e := range g.edges {
		top = max(top, margin+0.75*lift(e)-float64(min(g.nodes[e.from].row, g.nodes[e.to].row))*(nodeH+gapY))
	}
	width := colX[layers] - gapX + margin
	height := top + float64(rows)*nodeH + float64(rows-1)*gapY + margin
	pos := func(i int) (x, y, w float64) {
		n := g.nodes[i]
		return colX[n.layer], top + float64(n.row)*(nodeH+gapY), colW[n.layer]
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="graph" xmlns="http://www.w3.org/2000/svg" role="img" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`, width, height, width, height)
	b.WriteString(`<title>upgrade graph: arrows go from a bundle to the one that replaces (solid) or skips (dashed) it</title>`)
	for _, e := range g.edges {
		x1, y1, w1 := pos(e.from)
		x2, y2, _ := pos(e.to)
		sx, sy, ex, ey := x1+w1, y1+nodeH/2, x2, y2+nodeH/2
		c1x, c2x := sx+gapX/2, ex-gapX/2
		c1y, c2y := sy-lift(e), ey-lift(e)
		dash := ""
		class := "replaces"
		if e.skip {
			dash, class = ` stroke-dasharray="5 4"`, "skips"
		}
		fmt.Fprintf(&b, `<path class="edge %s" d="M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f" fill="none" stroke="#57606a" stroke-width="1.5"%s/>`,
			class, sx, sy, c1x, c1y, c2x, c2y, ex-6, ey, dash)
		fmt.Fprintf(&b, `<path d="M%.1f %.1f L%.1f %.1f L%.1f %.1f Z" fill="#57606a"/>`, ex, ey, ex-7, ey-4, ex-7, ey+4)
	}
	for i, n := range g.nodes {
		x, y, w := pos(i)
		fill, stroke, strokeW, class := "#ffffff", "#8c959f", 1.0, "node"
		if n.added {
			fill, stroke, class = "#d4f8d4", "#2da44e", class+" added"
		}
		if n.head {
			strokeW, class = 2.5, class+" head"
		}
		fmt.Fprintf(&b, `<g class="%s"><rect x="%.1f" y="%.1f" width="%.1f" height="%.0f" rx="4" fill="%s" stroke="%s" stroke-width="%.1f"/>`,
			class, x, y, w, nodeH, fill, stroke, strokeW)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-family="ui-monospace,monospace" font-size="12" fill="#1f2328">%s</text>`,
			x+padX, y+nodeH/2+4, html.EscapeString(labels[i]))
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
