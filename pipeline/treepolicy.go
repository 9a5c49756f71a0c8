package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/policy"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/report"
)

// TreePolicy is the policy a validation of a tree runs after each catalog's validation (`catalogbot
// validate`): the configuration's rules plus more presets, on the whole catalog, and, when its rules
// read bundle property values, the collector the validation's load fills (Visitor), so the catalog is
// read once.
type TreePolicy struct {
	presets   []string
	sev       policy.Severities
	collected *policy.Collector
	// since, when set, is the revision whose findings are pre-existing: the same rules run on the catalog
	// as that revision holds it, and what it already had is listed as notes that say so.
	since string
	// ofc keeps operator-framework's validators' findings for every catalog and side this policy checks,
	// and on disk for later runs (policy.OFCacheDir).
	ofc *policy.OFCache
}

// NewTreePolicy is the policy of cfg (possibly nil) with presets added, judged against since when set.
func NewTreePolicy(cfg *config.Config, presets []string, since string) *TreePolicy {
	var pc config.PolicyConfig
	if cfg != nil {
		pc = cfg.Policy
	}
	pc.Presets = append(slices.Clone(pc.Presets), presets...)
	p := &TreePolicy{presets: pc.Presets, sev: policy.SeveritiesOf(pc), since: since, ofc: policy.NewOFCache(policy.OFCacheDir())}
	if p.sev.NeedsValues() {
		p.collected = policy.NewCollector(p.sev)
	}
	return p
}

// Visitor is what a validation's load calls for each bundle (validate.Options.VisitBundle; nil when no
// rule reads property values).
func (p *TreePolicy) Visitor() func(*catalog.Bundle, [][]byte) {
	if p.collected == nil {
		return nil
	}
	return p.collected.Visit
}

// PolicyTarget is one validated catalog a TreePolicy checks.
type PolicyTarget struct {
	Dir string // the catalog's directory
	// Catalog is its layout entry: its name (empty for a catalog directory of its own, whose stage names
	// no catalog) and its settings.
	Catalog config.Catalog
	// Result is the validation's result; its catalog's Dir is where the findings name their files (a
	// catalog read again is read under it).
	Result  *validate.Result
	Limits  validate.Limits
	Whole   bool // Result holds the whole catalog (else dependencies are looked up in a lean load of it)
	Visited bool // Result's load called Visitor (else the rules that read values read the files again)
}

// Stage runs the policy on the target's catalog; ok is false when no rule is enabled.
func (p *TreePolicy) Stage(ctx context.Context, t PolicyTarget) (st report.Stage, ok bool, err error) {
	sev, lim := p.sev, t.Limits
	if len(sev) == 0 {
		return st, false, nil
	}
	start := time.Now()
	collected := p.collected
	if !t.Visited {
		collected = nil
	}
	in := policy.Input{Catalog: t.Result.Catalog, MaxPerRule: lim.MaxPerRule, Name: t.Catalog.Name, MigrateLevel: t.Catalog.MigrateLevel,
		Kubernetes: t.Catalog.Kubernetes, Collected: collected, OFCache: p.ofc}
	opts := catalog.LoadOptions{MaxFileSize: lim.MaxFileBytes, MaxTotalSize: lim.MaxTotalBytes}
	if t.Result.Catalog != nil {
		opts.Dir = t.Result.Catalog.Dir
	}
	// validate's catalog is lean: its files are read again with their values when a rule needs them
	// and they were not collected, or for operator-framework's validators (which a Collector gives only
	// the digest of a bundle's objects) on a bundle the cache has no findings for
	in.Reread = func(ctx context.Context, files []string) (*catalog.Catalog, error) {
		want := map[string]bool{}
		for _, f := range files {
			want[f] = true
		}
		o := opts
		o.Include, o.Diagnostics = func(p string) bool { return want[p] }, diag.NewLimiter(-1)
		full, err := catalog.LoadDir(ctx, t.Dir, o)
		if err != nil {
			return nil, err
		}
		return full.Catalog, nil
	}
	if sev.NeedsValues() && collected == nil {
		full, err := in.Reread(ctx, t.Result.Files)
		if err != nil {
			return st, false, err
		}
		in.Catalog = full
	}
	if !t.Whole && policy.Requires(in.Catalog, nil) {
		o := opts
		o.Lean, o.Diagnostics = true, diag.NewLimiter(-1)
		all, err := catalog.LoadDir(ctx, t.Dir, o)
		if err != nil {
			return st, false, err
		}
		in.Universe = all.Catalog
	}
	if p.since != "" {
		in.MaxPerRule = -1 // every finding of both sides until the baseline is taken
	}
	out, err := policy.Run(ctx, in, sev)
	if err != nil {
		return st, false, err
	}
	summary := ""
	if p.since != "" {
		var existing int
		if out.Diagnostics, out.Truncated, existing, err = p.sinceBase(ctx, t.Dir, in, out.Diagnostics, lim); err != nil {
			return st, false, err
		}
		summary = fmt.Sprintf("; %s already on %s", plural(existing, "finding"), p.since)
	}
	rules := 0
	for id := range sev {
		if !policy.IsChangeRule(id) {
			rules++
		}
	}
	summary = fmt.Sprintf("%d rules (%s) on %s, %s", rules, strings.Join(p.presets, ", "), plural(out.Packages, "package"), plural(out.Bundles, "bundle")) + summary
	if out.OLMv1Checked > 0 {
		summary += fmt.Sprintf("; OLM v1 can install %d of the %d bundles whose CSV the catalog holds", out.OLMv1Installable, out.OLMv1Checked)
	}
	if t.Catalog.Name != "" {
		summary = t.Catalog.Name + ": " + summary
	}
	return report.Stage{Name: strings.TrimSpace(policy.Check + " " + t.Catalog.Name), Status: report.StatusOf(out.Diagnostics, nil), Duration: time.Since(start),
		Diagnostics: out.Diagnostics, Truncated: out.Truncated, Summary: summary}, true, nil
}

// sinceBase runs the policy in (whose findings on the work tree are head) on the catalog directory dir as
// revision p.since holds it, and returns head with what that revision already had turned into notes
// that say so (policy.Baseline, policy.AsPreExisting), the per-rule limit applied, and how many were.
func (p *TreePolicy) sinceBase(ctx context.Context, dir string, in policy.Input, head []diag.Diagnostic, lim validate.Limits) ([]diag.Diagnostic, []diag.Truncation, int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, 0, diag.UsageError(fmt.Errorf("--since: %s: %w", dir, err))
	}
	top, err := gitrepo.TopLevel(ctx, abs)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--since %s: %w", p.since, err)
	}
	repo, err := gitrepo.Open(top)
	if err != nil {
		return nil, nil, 0, err
	}
	commit, err := repo.Resolve(p.since)
	if err != nil {
		return nil, nil, 0, err
	}
	rel, err := filepath.Rel(top, abs)
	if err != nil {
		return nil, nil, 0, diag.UsageError(fmt.Errorf("--since: %s is not in the repository at %s", dir, top))
	}
	fsys, err := repo.TreeFS(commit, filepath.ToSlash(rel), func(string) bool { return true })
	if err != nil {
		return nil, nil, 0, err
	}
	loaded, err := catalog.LoadFS(ctx, fsys, catalog.LoadOptions{MaxFileSize: lim.MaxFileBytes, MaxTotalSize: lim.MaxTotalBytes, Diagnostics: diag.NewLimiter(-1)})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--since %s: loading %s there: %w", p.since, rel, err)
	}
	in.Catalog, in.Universe, in.Collected, in.Reread = loaded.Catalog, nil, nil, nil
	base, err := policy.Run(ctx, in, p.sev)
	if err != nil {
		return nil, nil, 0, err
	}
	added, existing := policy.Baseline(head, base.Diagnostics)
	l := diag.NewLimiter(cmp.Or(lim.MaxPerRule, diag.DefaultMaxPerRule))
	l.AddAll(added)
	l.AddAll(policy.AsPreExisting(existing, p.since))
	return l.Diagnostics(), l.Truncated(), len(existing), nil
}
