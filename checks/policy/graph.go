package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// The graph rules: the upgrade-graph semantics OLM acts on that opm validate does not check.
const (
	ruleDangling          = "policy-dangling-bundle"
	ruleLoop              = "policy-graph-loop"
	ruleReplacesMissing   = "policy-replaces-missing"
	ruleSkipRangeAbove    = "policy-skiprange-above-version"
	ruleSkippedInChain    = "policy-skipped-in-replaces-chain"
	ruleSkipRangeNoReplac = "policy-skiprange-without-replaces"
	// ruleTooLarge: a channel too large to check (maxEdges, maxRangeChecks). It is an error whenever a
	// graph rule runs, whatever the severity any rule is given: the graph rules judge nothing on such a
	// channel, so a lower severity would let a hostile channel through all of them.
	ruleTooLarge = "policy-graph-too-large"
)

var graphRules = []string{ruleDangling, ruleLoop, ruleReplacesMissing, ruleSkipRangeAbove, ruleSkippedInChain, ruleSkipRangeNoReplac, ruleTooLarge}

// upgradeGraph is one channel's entries with every edge OLM follows: to upgrades from, to each
// entry it replaces, skips or whose version its skipRange covers.
type upgradeGraph struct {
	c       *catalog.Channel
	entries []catalog.ChannelEntry // duplicates dropped (validate reports them)
	index   map[string]int
	from    [][]int // from[i]: the entries entry i upgrades from
	heads   []string
	// tooLarge: the channel has more than maxEdges edges, or needs more than maxRangeChecks skipRange
	// comparisons, and was not analysed.
	tooLarge bool
}

// maxEdges bounds the edges of one channel's graph (memory: a hostile channel whose skipRanges cover
// every entry has entries x entries of them). A channel over it is refused, never checked in part.
const maxEdges = 4 << 20

// maxRangeChecks bounds the skipRange comparisons of one channel's graph (time: each skipRange is
// compared with every entry, entries x entries for a hostile channel whose skipRanges cover nothing).
// 4 Mi is a channel of 2,048 entries that all have a skipRange: about 2.5 s on a loaded 2-core machine
// (TestHostileChannelIsBounded); the largest real channels of the shared catalogs have a few hundred.
const maxRangeChecks = 4 << 20

func (r *run) newUpgradeGraph(p *pkgIndex, c *catalog.Channel) *upgradeGraph {
	g := &upgradeGraph{c: c, index: map[string]int{}}
	for _, e := range c.Entries {
		if _, dup := g.index[e.Name]; !dup {
			g.index[e.Name] = len(g.entries)
			g.entries = append(g.entries, e)
		}
	}
	g.from = make([][]int, len(g.entries))
	mark := make([]int, len(g.entries)) // mark[j] == i+1: entry i already links to j
	total, checks := 0, 0
	for i, e := range g.entries {
		var edges []int
		link := func(name string) {
			if j, ok := g.index[name]; ok && j != i && mark[j] != i+1 {
				mark[j] = i + 1
				edges = append(edges, j)
			}
		}
		link(e.Replaces)
		for _, s := range e.Skips {
			link(s)
		}
		if rng, ok := parseRange(e.SkipRange); ok {
			if r.ctx.Err() != nil { // a hostile channel's skipRanges cost entries x entries: stop at the deadline
				break
			}
			if checks += len(g.entries); checks > maxRangeChecks {
				g.tooLarge = true
				g.from = make([][]int, len(g.entries)) // nothing is judged on a partial graph
				break
			}
			for _, other := range g.entries {
				if b := p.byName[other.Name]; b != nil && b.vOK && rng(b.version) {
					link(other.Name)
				}
			}
		}
		g.from[i] = edges
		if total += len(edges); total > maxEdges {
			g.tooLarge = true
			g.from = make([][]int, len(g.entries)) // nothing is judged on a partial graph
			break
		}
	}
	g.heads = catalog.NewGraph(c).Heads()
	return g
}

func parseRange(s string) (semver.Range, bool) {
	if s == "" {
		return nil, false
	}
	rng, err := semver.ParseRange(s)
	return rng, err == nil
}

func (r *run) graphs() {
	if !r.on(graphRules...) {
		return
	}
	for _, p := range r.ix.order {
		if r.ctx.Err() != nil {
			return
		}
		reached := map[string]bool{}
		var graphs []*upgradeGraph
		for _, c := range p.channels {
			g := r.newUpgradeGraph(p, c)
			if g.tooLarge {
				r.sink.Add(diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: ruleTooLarge, File: r.in.Catalog.Dir.File(c.Pos.File), Line: c.Pos.Line, Column: c.Pos.Column,
					Package: p.name, Channel: c.Name, Message: fmt.Sprintf("channel %q of package %q has more than %d upgrade edges (replaces, skips and skipRange) or needs more than %d skipRange comparisons: too large to check", c.Name, p.name, maxEdges, maxRangeChecks),
					Hint: "narrow the skipRanges, or split the channel: each skipRange is compared with every entry, and every entry it covers is an edge"})
				continue
			}
			graphs = append(graphs, g)
			g.reach(reached)
			r.loops(p, g)
			r.entryRules(p, g)
		}
		if r.on(ruleDangling) {
			r.dangling(p, graphs, reached)
		}
	}
}

// reach marks every entry some head of g reaches, walking edges backwards from the heads. A channel
// without a head (a replaces cycle, validate's finding) counts as reaching all of its entries.
func (g *upgradeGraph) reach(reached map[string]bool) {
	if len(g.heads) == 0 {
		for _, e := range g.entries {
			reached[e.Name] = true
		}
		return
	}
	seen := make([]bool, len(g.entries))
	var stack []int
	for _, h := range g.heads {
		i := g.index[h]
		seen[i] = true
		stack = append(stack, i)
	}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		reached[g.entries[i].Name] = true
		for _, j := range g.from[i] {
			if !seen[j] {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
}

func (r *run) dangling(p *pkgIndex, graphs []*upgradeGraph, reached map[string]bool) {
	reported := map[string]bool{}
	for _, g := range graphs {
		for _, e := range g.entries {
			if reached[e.Name] || reported[e.Name] {
				continue
			}
			reported[e.Name] = true
			r.add(finding{rule: ruleDangling, pos: entryPos(g.c, e), pkg: p.name, channel: g.c.Name, bundle: e.Name,
				msg: fmt.Sprintf("bundle %q of package %q is dangling%s: no channel head (%s) reaches it through replaces, skips or skipRange, so a cluster running it never upgrades",
					e.Name, p.name, r.inCatalog(), strings.Join(g.heads, ", ")),
				hint: "make a bundle on the upgrade graph replace or skip it (or cover it with a skipRange), or remove it"})
		}
	}
}

// loops reports each strongly connected set of entries (Tarjan's algorithm, iterative) once, at its
// first entry in channel order.
func (r *run) loops(p *pkgIndex, g *upgradeGraph) {
	if !r.on(ruleLoop) {
		return
	}
	n := len(g.entries)
	idx, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range idx {
		idx[i] = -1
	}
	var stack []int
	counter := 0
	type frame struct{ v, next int }
	for root := range n {
		if idx[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		idx[root], low[root] = counter, counter
		counter++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.next < len(g.from[f.v]) {
				w := g.from[f.v][f.next]
				f.next++
				switch {
				case idx[w] < 0:
					idx[w], low[w] = counter, counter
					counter++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				case onStack[w]:
					low[f.v] = min(low[f.v], idx[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				low[call[len(call)-1].v] = min(low[call[len(call)-1].v], low[v])
			}
			if low[v] != idx[v] {
				continue
			}
			var scc []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			if len(scc) > 1 {
				r.reportLoop(p, g, scc)
			}
		}
	}
}

func (r *run) reportLoop(p *pkgIndex, g *upgradeGraph, scc []int) {
	slices.Sort(scc)
	in := map[int]bool{}
	for _, i := range scc {
		in[i] = true
	}
	var edges []string
	for _, i := range scc {
		e := g.entries[i]
		for _, j := range g.from[i] {
			if in[j] {
				edges = append(edges, fmt.Sprintf("%s %s %s", e.Name, edgeKind(e, g.entries[j].Name), g.entries[j].Name))
			}
		}
	}
	if len(edges) > 8 {
		edges = append(edges[:8], "...")
	}
	first := g.entries[scc[0]]
	r.add(finding{rule: ruleLoop, pos: entryPos(g.c, first), pkg: p.name, channel: g.c.Name, bundle: first.Name,
		msg:  fmt.Sprintf("channel %q of package %q has an upgrade loop%s through %d bundles: %s", g.c.Name, p.name, r.inCatalog(), len(scc), strings.Join(edges, ", ")),
		hint: "break the loop: a bundle may only replace, skip or cover with its skipRange bundles older than itself"})
}

func edgeKind(e catalog.ChannelEntry, target string) string {
	switch {
	case e.Replaces == target:
		return "replaces"
	case slices.Contains(e.Skips, target):
		return "skips"
	default:
		return "covers with skipRange " + fmt.Sprintf("%q", e.SkipRange) + ":"
	}
}

// entryRules are the rules about one entry at a time.
func (r *run) entryRules(p *pkgIndex, g *upgradeGraph) {
	skippedBy := map[string]string{}
	replacedBy := map[string]string{}
	for _, e := range g.entries {
		for _, s := range e.Skips {
			if _, ok := skippedBy[s]; !ok {
				skippedBy[s] = e.Name
			}
		}
		if e.Replaces != "" {
			if _, ok := replacedBy[e.Replaces]; !ok {
				replacedBy[e.Replaces] = e.Name
			}
		}
	}
	for _, e := range g.entries {
		pos := entryPos(g.c, e)
		f := finding{pos: pos, pkg: p.name, channel: g.c.Name, bundle: e.Name}
		if e.Replaces != "" && p.byName[e.Replaces] == nil {
			f.rule = ruleReplacesMissing
			f.msg = fmt.Sprintf("bundle %q replaces %q, which is not a bundle of package %q%s: clusters running it get no upgrade edge from this catalog", e.Name, e.Replaces, p.name, r.inCatalog())
			f.hint = fmt.Sprintf("add %q to this catalog, or make %q replace a bundle the catalog serves", e.Replaces, e.Name)
			r.add(f)
		}
		if e.SkipRange != "" && e.Replaces == "" {
			f.rule = ruleSkipRangeNoReplac
			f.msg = fmt.Sprintf("bundle %q has skipRange %q but no replaces: the upgrade graph is pruned to direct jumps into it", e.Name, e.SkipRange)
			f.hint = "add replaces naming the bundle it follows, so the graph keeps its chain"
			r.add(f)
		}
		if b := p.byName[e.Name]; b != nil && b.vOK && r.on(ruleSkipRangeAbove) {
			if rng, ok := parseRange(e.SkipRange); ok {
				if v, hit := coversFrom(rng, b.version); hit {
					f.rule = ruleSkipRangeAbove
					f.msg = fmt.Sprintf("bundle %q (version %s) has skipRange %q, which covers %s: its upper bound is above the bundle's own version, so a newer bundle can 'upgrade' to it",
						e.Name, b.version, e.SkipRange, v)
					f.hint = fmt.Sprintf("end the range below the bundle's own version, e.g. <%s", b.version)
					r.add(f)
				}
			}
		}
		if by, skipped := skippedBy[e.Name]; skipped && replacedBy[e.Name] != "" && e.Replaces != "" {
			f.rule = ruleSkippedInChain
			f.msg = fmt.Sprintf("bundle %q is skipped by %q and replaced by %q: OLM stops the replaces chain at a skipped bundle, so the chain below it (%q) is cut off",
				e.Name, by, replacedBy[e.Name], e.Replaces)
			f.hint = fmt.Sprintf("either skip %q or keep it on the replaces chain, not both", e.Name)
			r.add(f)
		}
	}
}

// coversFrom reports whether rng matches own or a version after it, and which.
func coversFrom(rng semver.Range, own semver.Version) (semver.Version, bool) {
	base := semver.Version{Major: own.Major, Minor: own.Minor, Patch: own.Patch}
	candidates := []semver.Version{own, base,
		{Major: own.Major, Minor: own.Minor, Patch: own.Patch + 1},
		{Major: own.Major, Minor: own.Minor + 1},
		{Major: own.Major + 1},
		{Major: own.Major + 1000}}
	for _, c := range candidates {
		if c.GTE(own) && rng(c) {
			return c, true
		}
	}
	return semver.Version{}, false
}
