package bot

import (
	"context"
	"fmt"

	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// baseRules are the rules of one pull request, loaded once from the base branch's current tip (never the
// merge base, which the author picks), and the prepared change they decide: the merge of the head into
// that tip (pipeline.PrepareMerge), what GitHub lands. Invalid rules block merging; nothing falls back to
// defaults.
type baseRules struct {
	repo  *gitrepo.Repo
	rules *pipeline.Rules // nil when the configuration is invalid (stage says why)
	stage report.Stage    // the config stage: Pass, or why the rules could not be loaded
	// change is the merge of the head into the tip, prepared once (nil with invalid rules).
	change *pipeline.Change
}

// loadBaseRules reads the rules at tip in the clone dir and prepares the merge of head into tip.
func loadBaseRules(ctx context.Context, dir, tip, head string) (*baseRules, error) {
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, err
	}
	br := &baseRules{repo: repo}
	br.rules, br.stage = pipeline.LoadRules(repo, tip)
	if br.rules == nil {
		return br, nil // the configuration error blocks merging; no package decides anything
	}
	if br.change, err = pipeline.PrepareMerge(ctx, repo, br.rules, tip, head); err != nil {
		return nil, err
	}
	return br, nil
}

// settings are the merge rules a check records. An invalid configuration records why: it blocks merging.
func (br *baseRules) settings() (store.Settings, error) {
	if br.rules == nil {
		why := br.stage.Err
		if why == "" {
			why = br.stage.Summary
		}
		return store.Settings{ConfigError: why}, nil
	}
	cfg := br.rules.Config
	pol, err := br.policy()
	if err != nil {
		return store.Settings{}, err
	}
	var checked string
	if br.change.Result != nil {
		checked = br.change.Result.Hash.String()
	}
	return store.Settings{CatalogDir: cfg.Catalog.Dir, MergeMethod: cfg.Merge.Method, RequiredLabels: cfg.Merge.RequiredLabels,
		RequiredApprovals: cfg.Merge.RequiredApprovals, Policy: &pol, Checked: checked}, nil
}

// policy says who may approve the change (pipeline.Rules.ApprovalPolicy).
func (br *baseRules) policy() (approval.Policy, error) {
	if br.rules == nil {
		return approval.Policy{}, fmt.Errorf("no approval policy: %s", br.stage.Err)
	}
	return br.change.ApprovalPolicy()
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
	for _, p := range br.change.Packages() {
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
