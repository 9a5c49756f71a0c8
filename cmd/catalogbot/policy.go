package main

import (
	"cmp"
	"context"
	"fmt"
	"path"
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

// policyPresets checks --policy's presets: they add to the configuration's, never take from it.
func policyPresets(presets []string) error {
	for _, p := range presets {
		if !slices.Contains(config.PolicyPresets, p) {
			return diag.UsageError(fmt.Errorf("--policy %q: not a preset (community, olmv1 or none)", p))
		}
	}
	return nil
}

// policyRun is the policy a validate run applies: the configuration's (cfg, possibly nil) plus the
// presets of --policy, and, when its rules read bundle property values, the collector validate's load
// fills (visit it with validate.Options.VisitBundle) so the catalog is read once.
type policyRun struct {
	presets   []string
	sev       policy.Severities
	collected *policy.Collector
	// since, when set (--since REV), is the revision whose findings are pre-existing: the same rules run
	// on the catalog as REV holds it, and what REV already had is listed as notes that say so.
	since string
}

// policyFlags are validate's policy flags: --policy's presets and --since's revision.
type policyFlags struct {
	presets []string
	since   string
}

func newPolicyRun(cfg *config.Config, flags policyFlags) *policyRun {
	var pc config.PolicyConfig
	if cfg != nil {
		pc = cfg.Policy
	}
	pc.Presets = append(slices.Clone(pc.Presets), flags.presets...)
	p := &policyRun{presets: pc.Presets, sev: policy.SeveritiesOf(pc), since: flags.since}
	if p.sev.NeedsValues() {
		p.collected = policy.NewCollector(p.sev)
	}
	return p
}

// visitor is what validate's load calls for each bundle (nil when no rule reads property values).
func (p *policyRun) visitor() func(*catalog.Bundle) {
	if p.collected == nil {
		return nil
	}
	return p.collected.Visit
}

// policyCatalog is the catalog a policy stage checks: its directory, and for one of a template-driven
// repository's catalogs its configuration and the repository-relative directory diagnostics are under.
type policyCatalog struct {
	dir    string
	cat    config.Catalog
	prefix string
}

// policyStage runs the policy the configuration (cfg, possibly nil) and --policy enable on the catalog
// validate loaded (res, of pc.dir); ok is false when no rule is enabled. whole says res holds the whole
// catalog; otherwise dependencies are looked up in a lean load of it.
func policyStage(ctx context.Context, target policyCatalog, pol *policyRun, res *validate.Result, lim validate.Limits, whole bool) (st report.Stage, ok bool, err error) {
	dir, sev := target.dir, pol.sev
	if len(sev) == 0 {
		return st, false, nil
	}
	start := time.Now()
	in := policy.Input{Catalog: res.Catalog, MaxPerRule: lim.MaxPerRule, Name: target.cat.Name, MigrateLevel: target.cat.MigrateLevel, Kubernetes: target.cat.Kubernetes,
		Collected: pol.collected}
	opts := catalog.LoadOptions{MaxFileSize: lim.MaxFileBytes, MaxTotalSize: lim.MaxTotalBytes}
	if sev.NeedsValues() && pol.collected == nil { // validate's catalog is lean: read its files again with their values
		files := map[string]bool{}
		for _, f := range res.Files {
			files[f] = true
		}
		o := opts
		o.Include, o.Diagnostics = func(p string) bool { return files[p] }, diag.NewLimiter(-1)
		full, err := catalog.LoadDir(ctx, dir, o)
		if err != nil {
			return st, false, err
		}
		in.Catalog = full.Catalog
	}
	if !whole && policy.Requires(in.Catalog, nil) {
		o := opts
		o.Lean, o.Diagnostics = true, diag.NewLimiter(-1)
		all, err := catalog.LoadDir(ctx, dir, o)
		if err != nil {
			return st, false, err
		}
		in.Universe = all.Catalog
	}
	if pol.since != "" {
		in.MaxPerRule = -1 // every finding of both sides until the baseline is taken
	}
	out, err := policy.Run(ctx, in, sev)
	if err != nil {
		return st, false, err
	}
	summary := ""
	if pol.since != "" {
		var existing int
		if out.Diagnostics, out.Truncated, existing, err = sinceBase(ctx, dir, pol, in, out.Diagnostics, lim); err != nil {
			return st, false, err
		}
		summary = fmt.Sprintf("; %s already on %s", count(existing, "finding"), pol.since)
	}
	for i, d := range out.Diagnostics {
		if d.File != "" && target.prefix != "" {
			out.Diagnostics[i].File = path.Join(target.prefix, d.File)
		}
	}
	rules := 0
	for id := range sev {
		if !policy.IsChangeRule(id) {
			rules++
		}
	}
	summary = fmt.Sprintf("%d rules (%s) on %s, %s", rules, strings.Join(pol.presets, ", "), count(out.Packages, "package"), count(out.Bundles, "bundle")) + summary
	if out.OLMv1Checked > 0 {
		summary += fmt.Sprintf("; OLM v1 can install %d of the %d bundles whose CSV the catalog holds", out.OLMv1Installable, out.OLMv1Checked)
	}
	if target.cat.Name != "" {
		summary = target.cat.Name + ": " + summary
	}
	return report.Stage{Name: strings.TrimSpace(policy.Check + " " + target.cat.Name), Status: report.StatusOf(out.Diagnostics, nil), Duration: time.Since(start),
		Diagnostics: out.Diagnostics, Truncated: out.Truncated, Summary: summary}, true, nil
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// sinceBase runs the policy in (whose findings on the work tree are head) on the catalog directory dir as
// revision pol.since holds it, and returns head with what that revision already had turned into notes
// that say so (policy.Baseline, policy.AsPreExisting), the per-rule limit applied, and how many were.
func sinceBase(ctx context.Context, dir string, pol *policyRun, in policy.Input, head []diag.Diagnostic, lim validate.Limits) ([]diag.Diagnostic, []diag.Truncation, int, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, 0, diag.UsageError(fmt.Errorf("--since: %s: %w", dir, err))
	}
	top, err := gitrepo.TopLevel(ctx, abs)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("--since %s: %w", pol.since, err)
	}
	repo, err := gitrepo.Open(top)
	if err != nil {
		return nil, nil, 0, err
	}
	commit, err := repo.Resolve(pol.since)
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
		return nil, nil, 0, fmt.Errorf("--since %s: loading %s there: %w", pol.since, rel, err)
	}
	in.Catalog, in.Universe, in.Collected = loaded.Catalog, nil, nil
	base, err := policy.Run(ctx, in, pol.sev)
	if err != nil {
		return nil, nil, 0, err
	}
	added, existing := policy.Baseline(head, base.Diagnostics)
	l := diag.NewLimiter(cmp.Or(lim.MaxPerRule, diag.DefaultMaxPerRule))
	l.AddAll(added)
	l.AddAll(policy.AsPreExisting(existing, pol.since))
	return l.Diagnostics(), l.Truncated(), len(existing), nil
}
