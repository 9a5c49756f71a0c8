package report

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// UpgradeGraph is one channel's upgrade graph as a change leaves it: what the graph stage carries for
// drawing (the run page's SVG) and what its mermaid block in the details is written from.
type UpgradeGraph struct {
	Package string      `json:"package"`
	Channel string      `json:"channel"`
	Nodes   []GraphNode `json:"nodes"`
	Edges   []GraphEdge `json:"edges"`
}

// GraphNode is a bundle of the graph: the channel's entries in their order, then the bundles their
// replaces and skips name that are not entries (External), in the order first named.
type GraphNode struct {
	Name     string `json:"name"`
	External bool   `json:"external,omitempty"`
	Added    bool   `json:"added,omitempty"` // an entry the change added
	Head     bool   `json:"head,omitempty"`  // the channel head
}

// EdgeKind is how an entry upgrades from a bundle.
type EdgeKind string

const (
	Replaces EdgeKind = "replaces"
	Skips    EdgeKind = "skips"
)

// GraphEdge is an upgrade from node From to node To (indices in Nodes): To replaces or skips From.
// Edges come in the entries' order, each entry's replaces before its skips.
type GraphEdge struct {
	From int      `json:"from"`
	To   int      `json:"to"`
	Kind EdgeKind `json:"kind"`
}

// Label is the node's name as drawn: a quote or backtick becomes ', a line break, control or
// bidirectional-control character a space, so the name stays on its line and inside a quoted label.
func (n GraphNode) Label() string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '"' || r == '`':
			return '\''
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '\u2028' || r == '\u2029':
			return ' '
		}
		return r
	}, n.Name)
}

// Mermaid writes the graph as a fenced mermaid block: an arrow from each entry to the bundle it replaces
// (solid) or skips (dotted, labelled), added entries highlighted, the head's label marked "(head)". A
// node outside the channel is defined where an arrow first names it. An edge naming no node (a stored
// graph gone wrong) names an undefined one.
func (g UpgradeGraph) Mermaid() string {
	var b strings.Builder
	b.WriteString("```mermaid\ngraph LR\n")
	defined := 0
	id := func(i int) string {
		for ; defined <= i && defined < len(g.Nodes); defined++ {
			n := g.Nodes[defined]
			label := n.Label()
			if n.Head {
				label += " (head)"
			}
			fmt.Fprintf(&b, "  n%d[\"%s\"]\n", defined, label)
		}
		return fmt.Sprintf("n%d", i)
	}
	for i, n := range g.Nodes {
		if !n.External {
			id(i)
		}
	}
	for _, e := range g.Edges {
		to := id(e.To)
		switch from := id(e.From); e.Kind {
		case Skips:
			fmt.Fprintf(&b, "  %s -.->|skips| %s\n", to, from)
		default:
			fmt.Fprintf(&b, "  %s --> %s\n", to, from)
		}
	}
	var added []int
	for i, n := range g.Nodes {
		if n.Added {
			added = append(added, i)
		}
	}
	slices.SortStableFunc(added, func(a, b int) int { return strings.Compare(g.Nodes[a].Name, g.Nodes[b].Name) })
	for _, i := range added {
		fmt.Fprintf(&b, "  style n%d fill:#d4f8d4,stroke:#2da44e\n", i)
	}
	b.WriteString("```\n")
	return b.String()
}
