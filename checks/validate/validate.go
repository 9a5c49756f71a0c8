// Package validate checks a file-based catalog against every rule `opm validate` (operator-registry
// v1.73.0) enforces, and reports all problems at once, each with its file, line, object and rule id.
// It never rejects a catalog opm accepts: rules opm does not have are warnings.
package validate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// Check is the name of this check in diagnostics and reports.
const Check = "validate"

// Options tune Dir.
type Options struct {
	// Include limits loading to some files (see catalog.LoadOptions.Include); the rules then run on what
	// was loaded, so it must include every file of the packages to check.
	Include func(path string) bool
	// Packages, when set, limits the reported diagnostics to these packages (and file-level problems).
	Packages map[string]bool
	// Limits bound what is read and what is kept; the zero value means the defaults.
	Limits Limits
	// VisitBundle, when set, is called for each bundle as it loads, with its property values and its
	// decoded objects (see catalog.LoadOptions.VisitBundle): another check reads them without loading the
	// catalog, or decoding its objects, again.
	VisitBundle func(b *catalog.Bundle, objects [][]byte)
	// Sized, when set, is told the total size of the files the load reads before it reads any (see
	// catalog.LoadOptions.Sized).
	Sized func(bytes int64)
	// Dir is where the catalog is in the repository: every diagnostic names its file under it (see
	// catalog.LoadOptions.Dir).
	Dir diag.Dir
}

// Limits bound the work and memory a hostile catalog can cost. Zero fields mean the defaults.
type Limits struct {
	// MaxFileBytes bounds each file (catalog.DefaultMaxFileSize).
	MaxFileBytes int64
	// MaxTotalBytes bounds the catalog's files together (catalog.DefaultMaxTotalSize).
	MaxTotalBytes int64
	// MaxPerRule bounds the diagnostics kept per rule (diag.DefaultMaxPerRule); the rest are counted in
	// Result.Truncated. Negative keeps everything.
	MaxPerRule int
}

func (l Limits) limiter() *diag.Limiter {
	switch {
	case l.MaxPerRule < 0:
		return diag.NewLimiter(0)
	case l.MaxPerRule == 0:
		return diag.NewLimiter(diag.DefaultMaxPerRule)
	}
	return diag.NewLimiter(l.MaxPerRule)
}

// Result is the outcome of validating a directory.
type Result struct {
	Catalog     *catalog.Catalog
	Files       []string
	Diagnostics []diag.Diagnostic
	// Truncated counts, per rule, the diagnostics found beyond Limits.MaxPerRule (not in Diagnostics).
	Truncated []diag.Truncation
}

// Valid reports whether no error was found.
func (r *Result) Valid() bool { return !diag.HasErrors(r.Diagnostics) }

// Dir loads and validates the catalog in dir.
func Dir(ctx context.Context, dir string, opts Options) (*Result, error) {
	return load(func(lo catalog.LoadOptions) (*catalog.Result, error) { return catalog.LoadDir(ctx, dir, lo) }, opts)
}

// load validates what loadWith loads (catalog.LoadDir or catalog.LoadFS with the options given).
func load(loadWith func(catalog.LoadOptions) (*catalog.Result, error), opts Options) (*Result, error) {
	refs := &refCache{}
	sink := opts.Limits.limiter()
	keep := func(d diag.Diagnostic) bool {
		return opts.Packages == nil || d.Package == "" || opts.Packages[d.Package]
	}
	rejected := &rejectedBundles{}
	sink.Observe(rejected.observe)
	sink.Filter(keep)
	visit := refs.visit
	if opts.VisitBundle != nil {
		visit = func(b *catalog.Bundle, objects [][]byte) { refs.visit(b, objects); opts.VisitBundle(b, objects) }
	}
	// the rules read no string of a CSV's metadata, only its type (refs reads images): another check's
	// visitor may
	res, err := loadWith(catalog.LoadOptions{Lean: true, CSVTypesOnly: opts.VisitBundle == nil,
		Dir: opts.Dir, Include: opts.Include, VisitBundle: visit, Sized: opts.Sized,
		MaxFileSize: opts.Limits.MaxFileBytes, MaxTotalSize: opts.Limits.MaxTotalBytes, Diagnostics: sink})
	if err != nil {
		return nil, err
	}
	if !res.Refused {
		sink.Observe(nil)
		sink.Filter(func(d diag.Diagnostic) bool { return keep(d) && !rejected.echo(d) })
		(&validator{c: res.Catalog, refs: refs, sink: sink}).run()
	}
	return &Result{Catalog: res.Catalog, Files: res.Files, Diagnostics: sink.Diagnostics(), Truncated: sink.Truncated()}, nil
}

// Catalog runs the model rules on a loaded catalog (load-time problems are the loader's diagnostics) and
// returns every diagnostic they find, each naming its file under c.Dir.
func Catalog(c *catalog.Catalog) []diag.Diagnostic {
	sink := diag.NewLimiter(0)
	(&validator{c: c, refs: &refCache{}, sink: sink}).run()
	return sink.Diagnostics()
}

// validator holds the indexes the rules share.
type validator struct {
	c    *catalog.Catalog
	sink *diag.Limiter
	refs *refCache

	pkgs     map[string]*pkgState
	pkgOrder []*pkgState
}

type pkgState struct {
	p        *catalog.Package
	channels map[string]*catalog.Channel
	chOrder  []*catalog.Channel
	bundles  map[string]*bundleState
	// entries of every channel, by bundle name
	inChannels map[string][]*catalog.Channel
	deprecated bool
}

type bundleState struct {
	b       *catalog.Bundle
	version string // normalized version string (with release), "" when the version is invalid
	vOK     bool
}

func (v *validator) run() {
	v.packages()
	v.channels()
	v.bundles()
	v.channelEntries()
	v.defaults()
	v.graphs()
	v.versions()
	v.deprecations()
}

func (v *validator) add(pos catalog.Pos, rule, pkg, ch, bundle, msg, hint string) {
	v.sink.Add(diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: rule,
		File: v.c.Dir.File(pos.File), Line: pos.Line, Column: pos.Column, Package: pkg, Channel: ch, Bundle: bundle,
		Message: msg, Hint: hint})
}

// names lists the keys of a set, sorted, for messages.
func names[T any](m map[string]T) string {
	list := make([]string, 0, len(m))
	for k := range m {
		list = append(list, k)
	}
	sort.Strings(list)
	if len(list) == 0 {
		return "(none)"
	}
	return strings.Join(list, ", ")
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// refCache memoizes image reference checks; the loader fills it in parallel while parsing. A reference
// of the plain form (plainReference) is checked again each time instead: that costs less than the memo's
// lookup, and a catalog's thousands of such references take no memory.
type refCache struct{ m sync.Map }

func (r *refCache) visit(b *catalog.Bundle, _ [][]byte) {
	if b.Image != "" {
		r.check(b.Image)
	}
	for _, ri := range b.RelatedImages {
		if ri.Image != "" {
			r.check(ri.Image)
		}
	}
}

func (r *refCache) check(ref string) error {
	if plainReference(ref) {
		return nil
	}
	if v, ok := r.m.Load(ref); ok {
		if v == nil {
			return nil
		}
		return v.(error)
	}
	err := parsePullSpec(ref)
	if err != nil {
		r.m.Store(ref, err)
	} else {
		r.m.Store(ref, nil)
	}
	return err
}
