// Package policy holds the checks real catalog pipelines (operator-pipelines for community-operators and
// certified-operators) run beyond opm validate: upgrade-graph semantics opm accepts, dependencies no bundle
// satisfies, bundle content (required CSV fields, NetworkPolicies) and OLM v1 readiness. Each rule has an
// id (config.PolicyRules) and the severity the repository's configuration gives it; rules that are off do
// not run. Findings are diagnostics of check "policy" with file:line, package, channel, bundle and a hint.
package policy

import (
	"context"
	"errors"
	"slices"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

// Check is the diagnostics' check name and the pipeline stage's.
const Check = "policy"

// Input is one catalog to check.
type Input struct {
	// Catalog holds at least every blob of the packages to check. Bundle property values are read when
	// present; a lean catalog (catalog.LoadOptions.Lean) still gets the graph and dependency rules. Every
	// finding names its file under Catalog.Dir, where it loaded from.
	Catalog *catalog.Catalog
	// Packages limits the findings to these packages (the ones a change touched); nil checks every
	// package. Dependencies are still looked up in the whole Catalog.
	Packages map[string]bool
	// Universe, when set, is the whole catalog dependencies are looked up in (a lean load suffices), for a
	// Catalog that holds only the packages to check; nil looks them up in Catalog.
	Universe *catalog.Catalog
	// Name names the catalog in messages ("v4.16"); empty for a repository's only catalog.
	Name string
	// Kubernetes is the Kubernetes version the catalog serves ("1.29", config.Catalog.Kubernetes); empty
	// when unknown (policy-removed-api then does not run).
	Kubernetes string
	// MigrateLevel is the catalog's configured migrate level (config.Catalog.MigrateLevel).
	MigrateLevel string
	// Collected, when set, holds what was decoded from the bundles' property values while Catalog loaded
	// (a lean catalog keeps none): see Collector.
	Collected *Collector
	// Reread reads Catalog's files again with their values. It is required with Collected when
	// operator-framework's validators run: a Collector keeps only the digest of a bundle's manifests, and
	// the validators read the files of the bundles the cache has no findings for.
	Reread Reread
	// MaxPerRule bounds the diagnostics kept per rule (diag.DefaultMaxPerRule when zero).
	MaxPerRule int
	// OFCache, when set, keeps operator-framework's validators' findings by bundle content across the
	// catalogs and runs it serves (NewOFCache); nil keeps them for this run only.
	OFCache *OFCache
	// ImageObjects, when set, reads the objects of checked bundles whose catalog entry holds none
	// (olm.csv.metadata form) from their image, for the rules that need them (imageRules).
	ImageObjects ImageObjects
}

// Result is what the rules found, with what they looked at.
type Result struct {
	Diagnostics []diag.Diagnostic
	Truncated   []diag.Truncation
	// Packages and Bundles count what was checked.
	Packages, Bundles int
	// OLMv1 counts, when an olmv1 rule ran, the checked bundles OLM v1 can install (no olmv1 finding).
	OLMv1Installable, OLMv1Checked int
	// FromImages counts the bundles whose objects were read from their image (Input.ImageObjects).
	FromImages int
}

// Severities is config.PolicyConfig.Severities as diagnostic severities: the rules that run.
type Severities map[string]diag.Severity

// SeveritiesOf resolves a repository's policy configuration.
func SeveritiesOf(p config.PolicyConfig) Severities {
	out := Severities{}
	for id, sev := range p.Severities() {
		switch sev {
		case config.PolicyError:
			out[id] = diag.Error
		case config.PolicyWarning:
			out[id] = diag.Warning
		}
	}
	return out
}

// run is the state of one Run: the catalog's indexes and the diagnostics sink.
type run struct {
	ctx  context.Context
	in   Input
	sev  Severities
	sink *diag.Limiter
	ix   *index
	res  *Result
	// contents caches each bundle's decoded properties for the content and OLM v1 rules.
	contents map[*catalog.Bundle]*content
	// what: what decodeContent keeps of each bundle (its manifests, its staged size)
	what decodeWhat
	// ofJudged holds the bundles operator-framework's validators ran on: the rules whose findings they
	// would repeat (a removed API, an invalid minKubeVersion) leave those to them.
	ofJudged map[*catalog.Bundle]bool
	// failed is why a step could not judge what it had to (Run returns it instead of a result).
	failed error
}

// Run checks in with the rules sev enables. It returns early with ctx's error when ctx is done.
func Run(ctx context.Context, in Input, sev Severities) (*Result, error) {
	max := in.MaxPerRule
	if max == 0 {
		max = diag.DefaultMaxPerRule
	}
	r := &run{ctx: ctx, in: in, sev: sev, sink: diag.NewLimiter(max), res: &Result{},
		contents: map[*catalog.Bundle]*content{}, what: sev.decodeWhat(), ofJudged: map[*catalog.Bundle]bool{}}
	if in.Collected != nil {
		r.contents = in.Collected.m
		if in.Collected.what.manifests && in.Reread == nil {
			return nil, errors.New("policy: operator-framework's validators run on collected content without Input.Reread")
		}
	}
	if len(sev) == 0 || in.Catalog == nil {
		return r.res, nil
	}
	r.ix = newIndex(in.Catalog, in.Universe, in.Packages)
	r.res.Packages = len(r.ix.order)
	for _, p := range r.ix.order {
		r.res.Bundles += len(p.bundles)
	}
	if err := r.fetchObjects(); err != nil {
		return nil, err
	}
	for _, step := range []func(){r.graphs, r.dependencies, r.ofValidate, r.bundleContents, r.removedAPIs, r.olmv1, r.operatorNames, r.apiVersionConstraints, r.objectsMissing} {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		step()
		if r.failed != nil {
			return nil, r.failed
		}
	}
	r.res.Diagnostics, r.res.Truncated = r.sink.Diagnostics(), r.sink.Truncated()
	return r.res, nil
}

func (r *run) on(ids ...string) bool {
	return slices.ContainsFunc(ids, func(id string) bool { return r.sev[id] != "" })
}

// finding is one diagnostic before its severity and check are set.
type finding struct {
	rule                 string
	pos                  catalog.Pos
	pkg, channel, bundle string
	msg, hint            string
}

func (r *run) add(f finding) { r.addAs(f, r.sev[f.rule]) }

// addWarning adds f as a warning if its rule runs, whatever its severity.
func (r *run) addWarning(f finding) {
	if r.sev[f.rule] != "" {
		r.addAs(f, diag.Warning)
	}
}

func (r *run) addAs(f finding, sev diag.Severity) {
	if sev == "" {
		return
	}
	r.sink.Add(diag.Diagnostic{Severity: sev, Check: Check, Rule: f.rule, File: r.in.Catalog.Dir.File(f.pos.File), Line: f.pos.Line,
		Column: f.pos.Column, Package: f.pkg, Channel: f.channel, Bundle: f.bundle, Message: f.msg, Hint: f.hint})
}

// inCatalog is " in catalog NAME" for messages, or "" for a repository's only catalog.
func (r *run) inCatalog() string {
	if r.in.Name == "" {
		return ""
	}
	return " in catalog " + r.in.Name
}

// Requires reports whether a bundle of c's packages in only (nil: all) declares a dependency: only then
// do the dependency rules need the whole catalog as Input.Universe.
func Requires(c *catalog.Catalog, only map[string]bool) bool {
	for _, b := range c.Bundles {
		if (only == nil || only[b.Package]) && b.Parsed != nil && (len(b.Parsed.PackagesRequired) > 0 || len(b.Parsed.GVKsRequired) > 0) {
			return true
		}
	}
	return false
}

// valueRules read bundle property values, which a lean catalog does not keep (the others need only the
// channels, the property types and the decoded packages and dependencies a lean load keeps).
var valueRules = []string{ruleAPIVersions, ruleCSVRequiredFields, ruleNetworkPolicy, ruleRemovedAPI, ruleSize, ruleV1Format, ruleV1AllNS, ruleV1Conditions, ruleV1Webhooks,
	ruleOFBundle, ruleOFCSV, ruleOFCRD, ruleOFOperatorHub, ruleOFCapabilities, ruleOFCategories, ruleOFDeprecatedAPIs, ruleOFGoodPractices}

// NeedsValues reports whether an enabled rule reads bundle property values: the catalog must then be
// loaded without catalog.LoadOptions.Lean.
func (s Severities) NeedsValues() bool {
	return slices.ContainsFunc(valueRules, func(id string) bool { return s[id] != "" })
}
