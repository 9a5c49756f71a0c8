package diag

import (
	"cmp"
	"container/heap"
	"slices"
	"sync"
)

// DefaultMaxPerRule is how many diagnostics of one rule a run keeps unless configured otherwise: enough to
// see the pattern and fix it, few enough that a hostile catalog with a million broken objects cannot
// make catalogbot hold or print a million diagnostics.
const DefaultMaxPerRule = 100

// Truncation counts the diagnostics of one rule that a Limiter dropped.
type Truncation struct {
	Check    string   `json:"check"`
	Rule     string   `json:"rule,omitempty"`
	Severity Severity `json:"severity"`
	Count    int      `json:"count"`
}

// Limiter keeps, for each check and rule, the first Max diagnostics in Compare order and counts the rest,
// so memory stays bounded however many problems an input has. Which diagnostics are kept does not depend on
// the order they arrive in, so concurrent producers give deterministic results. It is safe for concurrent
// use. Max <= 0 keeps everything.
type Limiter struct {
	Max int

	mu      sync.Mutex
	kept    map[ruleKey]*worstFirst
	dropped map[ruleKey]int
	keep    func(Diagnostic) bool
	observe func(Diagnostic)
}

type ruleKey struct {
	check, rule string
	severity    Severity
}

// NewLimiter returns a Limiter keeping max diagnostics per rule (max <= 0: all).
func NewLimiter(max int) *Limiter { return &Limiter{Max: max} }

// Filter makes the limiter ignore (neither keep nor count) the diagnostics keep rejects from now on
// (nil: none). keep is called with the limiter's lock held.
func (l *Limiter) Filter(keep func(Diagnostic) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.keep = keep
}

// Observe makes the limiter show every diagnostic added from now on to fn (nil: none) before it is
// filtered or limited: what a caller must know of all diagnostics, not only of those kept. fn is called
// with the limiter's lock held.
func (l *Limiter) Observe(fn func(Diagnostic)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observe = fn
}

// Add records d.
func (l *Limiter) Add(d Diagnostic) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.observe != nil {
		l.observe(d)
	}
	if l.keep != nil && !l.keep(d) {
		return
	}
	if l.kept == nil {
		l.kept, l.dropped = map[ruleKey]*worstFirst{}, map[ruleKey]int{}
	}
	k := ruleKey{d.Check, d.Rule, d.Severity}
	h := l.kept[k]
	if h == nil {
		h = &worstFirst{}
		l.kept[k] = h
	}
	if l.Max <= 0 || len(*h) < l.Max {
		heap.Push(h, d)
		return
	}
	l.dropped[k]++
	if Compare(d, (*h)[0]) < 0 { // d comes before the last one kept: keep d instead
		(*h)[0] = d
		heap.Fix(h, 0)
	}
}

// AddAll records every diagnostic of ds.
func (l *Limiter) AddAll(ds []Diagnostic) {
	for _, d := range ds {
		l.Add(d)
	}
}

// Diagnostics returns what was kept, sorted with Sort.
func (l *Limiter) Diagnostics() []Diagnostic {
	l.mu.Lock()
	defer l.mu.Unlock()
	var all []Diagnostic
	for _, h := range l.kept {
		all = append(all, *h...)
	}
	return Sort(all)
}

// Truncated lists, by check and rule, how many diagnostics were dropped (none when nothing was).
func (l *Limiter) Truncated() []Truncation {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ts []Truncation
	for k, n := range l.dropped {
		ts = append(ts, Truncation{Check: k.check, Rule: k.rule, Severity: k.severity, Count: n})
	}
	slices.SortFunc(ts, func(a, b Truncation) int {
		return cmp.Or(cmp.Compare(a.Check, b.Check), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Severity, b.Severity))
	})
	return ts
}

// TruncatedCount is the total of counts, of one severity or (sev "") all.
func TruncatedCount(ts []Truncation, sev Severity) int {
	n := 0
	for _, t := range ts {
		if sev == "" || t.Severity == sev {
			n += t.Count
		}
	}
	return n
}

// worstFirst is a heap whose root is the diagnostic that sorts last: the one to drop first.
type worstFirst []Diagnostic

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return Compare(h[i], h[j]) > 0 }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(Diagnostic)) }
func (h *worstFirst) Pop() any {
	old := *h
	d := old[len(old)-1]
	*h = old[:len(old)-1]
	return d
}
