package bot

import (
	"context"
	"fmt"

	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// baseRules are the rules of one pull request, loaded once from the base branch's current tip (never the
// merge base, which the author picks): the configuration, the owners files of the packages the pull
// request changes, and who may approve it. Invalid rules block merging; nothing falls back to defaults.
type baseRules struct {
	repo  *gitrepo.Repo
	rules *pipeline.Rules // nil when the configuration is invalid (stage says why)
	stage report.Stage    // the config stage: Pass, or why the rules could not be loaded
	// packages the pull request changes (top directories of the catalog), sorted.
	packages []string
	// outside is set when it changes paths outside the catalog's packages (only maintainers may).
	outside bool
}

// loadBaseRules reads the rules at tip for the change base..head in the clone dir.
func loadBaseRules(ctx context.Context, dir, tip, base, head string) (*baseRules, error) {
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, err
	}
	br := &baseRules{repo: repo}
	br.rules, br.stage = pipeline.LoadRules(repo, tip)
	if br.rules == nil {
		return br, nil // the configuration error blocks merging; no package decides anything
	}
	br.packages, br.outside, err = br.rules.ChangedPackages(ctx, repo, base, head)
	if err != nil {
		return nil, err
	}
	return br, nil
}

// settings are the merge rules a check records. An invalid configuration records why: it blocks merging.
func (br *baseRules) settings() (settings, error) {
	if br.rules == nil {
		why := br.stage.Err
		if why == "" {
			why = br.stage.Summary
		}
		return settings{ConfigError: why}, nil
	}
	cfg := br.rules.Config
	pol, err := br.policy()
	if err != nil {
		return settings{}, err
	}
	files := []string{config.ConfigFile}
	for _, p := range br.packages {
		if f := cfg.OwnersFilePath(p); f != "" {
			files = append(files, f)
		}
	}
	return settings{CatalogDir: cfg.Catalog.Dir, MergeMethod: cfg.Merge.Method, RequiredLabels: cfg.Merge.RequiredLabels,
		RequiredApprovals: cfg.Merge.RequiredApprovals, Policy: &pol, RuleFiles: files}, nil
}

// policy says who may approve the change (pipeline.Rules.ApprovalPolicy).
func (br *baseRules) policy() (approval.Policy, error) {
	if br.rules == nil {
		return approval.Policy{}, fmt.Errorf("no approval policy: %s", br.stage.Err)
	}
	return br.rules.ApprovalPolicy(br.repo, br.packages, br.outside)
}

// mayAct reports whether login is a maintainer or owns a package the change touches (withWrite: also
// anyone with write access when the configuration says so): who may approve with /approve. (Lifting a
// hold takes its holder or a maintainer: mayLift.)
func (br *baseRules) mayAct(ctx context.Context, login string, lk approval.Lookup, withWrite bool) (bool, error) {
	pol, err := br.policy()
	if err != nil {
		return false, err
	}
	pol.WriteAccess = pol.WriteAccess && withWrite
	if ok, err := approval.MayApprove(ctx, pol, login, lk); ok || err != nil {
		return ok, err
	}
	for _, p := range br.packages {
		o, err := br.ownersOf(p)
		if err != nil {
			return false, err
		}
		one := approval.Policy{Maintainers: pol.Maintainers, PackageOwners: map[string][]string{p: o}}
		if ok, err := approval.MayApprove(ctx, one, login, lk); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// ownersOf are pkg's owners: the configuration's, then its owners file's.
func (br *baseRules) ownersOf(pkg string) ([]string, error) {
	return br.rules.PackageOwners(br.repo, pkg)
}
