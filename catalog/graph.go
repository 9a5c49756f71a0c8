package catalog

import (
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// Graph is a channel's upgrade graph as OLM sees it: entries with replaces, skips and skipRange edges.
type Graph struct {
	c     *Channel
	index map[string]int
	// uniq are the entries with duplicate names dropped (the first wins), in channel order.
	uniq []ChannelEntry
}

// NewGraph indexes a channel's entries (the first entry wins for duplicate names).
func NewGraph(c *Channel) *Graph {
	g := &Graph{c: c, index: make(map[string]int, len(c.Entries)), uniq: make([]ChannelEntry, 0, len(c.Entries))}
	for i, e := range c.Entries {
		if _, dup := g.index[e.Name]; !dup {
			g.index[e.Name] = i
			g.uniq = append(g.uniq, e)
		}
	}
	return g
}

// Entry returns the named entry (the zero entry with the channel's position when absent).
func (g *Graph) Entry(name string) ChannelEntry {
	if i, ok := g.index[name]; ok {
		return g.c.Entries[i]
	}
	return ChannelEntry{Name: name, Pos: g.c.Pos}
}

func (g *Graph) entries() []ChannelEntry { return g.uniq }

// Heads are the entries nothing replaces or skips, sorted. A valid channel has exactly one.
func (g *Graph) Heads() []string {
	incoming := map[string]bool{}
	for _, e := range g.entries() {
		if e.Replaces != "" {
			incoming[e.Replaces] = true
		}
		for _, s := range e.Skips {
			incoming[s] = true
		}
	}
	var heads []string
	for _, e := range g.entries() {
		if !incoming[e.Name] {
			heads = append(heads, e.Name)
		}
	}
	sort.Strings(heads)
	return heads
}

// Head returns the single head, or "" when there is none or more than one.
func (g *Graph) Head() string {
	if h := g.Heads(); len(h) == 1 {
		return h[0]
	}
	return ""
}

// ReplacesChain follows replaces from head the way OLM does: it stops at a bundle that is skipped by any
// entry, or at a name that is not in the channel. It returns the names on the chain (including the last,
// possibly absent, replaces target), or the cycle when the chain loops.
func (g *Graph) ReplacesChain(head string) (chain map[string]bool, cycle []string) {
	skipped := g.skipped()
	chain = map[string]bool{head: true}
	path := []string{head}
	cur, ok := g.index[head]
	for ok {
		e := g.c.Entries[cur]
		if skipped[e.Replaces] {
			break
		}
		if chain[e.Replaces] {
			for i, n := range path {
				if n == e.Replaces {
					return chain, append(append([]string(nil), path[i:]...), e.Replaces)
				}
			}
			return chain, append(path, e.Replaces)
		}
		chain[e.Replaces] = true
		path = append(path, e.Replaces)
		cur, ok = g.index[e.Replaces]
	}
	return chain, nil
}

func (g *Graph) skipped() map[string]bool {
	skipped := map[string]bool{}
	for _, e := range g.entries() {
		for _, s := range e.Skips {
			skipped[s] = true
		}
	}
	return skipped
}

// Stranded lists entries neither on the chain nor skipped by any entry.
func (g *Graph) Stranded(chain map[string]bool) []string {
	skipped := g.skipped()
	var out []string
	for _, e := range g.entries() {
		if !chain[e.Name] && !skipped[e.Name] {
			out = append(out, e.Name)
		}
	}
	return out
}

// DescribeCycle names the replaces/skips edges of a head-less channel, for messages.
func (g *Graph) DescribeCycle() string {
	var edges []string
	for _, e := range g.entries() {
		if e.Replaces != "" {
			edges = append(edges, e.Name+" replaces "+e.Replaces)
		}
		for _, s := range e.Skips {
			edges = append(edges, e.Name+" skips "+s)
		}
	}
	if len(edges) > 6 {
		edges = append(edges[:6], "...")
	}
	return strings.Join(edges, ", ")
}

// SkipRangeMatches reports whether version falls in entry's skipRange (false when there is none or it
// does not parse).
func SkipRangeMatches(e ChannelEntry, version string) bool {
	if e.SkipRange == "" {
		return false
	}
	r, err := semver.ParseRange(e.SkipRange)
	if err != nil {
		return false
	}
	v, err := semver.Parse(version)
	return err == nil && r(v)
}
