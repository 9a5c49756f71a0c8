package pipeline

import (
	"bytes"
	"context"
	"path"
	"slices"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
)

// BaseMove is what the base branch's move since a check matters to the checked change: both front-ends
// (the bot, the Action) compute it the same way and give it to checks/merge.Decide as facts.
type BaseMove struct {
	// Rules are the rule files (configuration, owners files) the move changed: the checks must run again
	// before anything merges.
	Rules []string
	// Overlap are the packages the move changed that the change also changes (by package identity, in the
	// layout of the checked tip's configuration): no check saw both together.
	Overlap []string
}

// Harmless tells whether the move changes neither the rules nor what the change changes.
func (m *BaseMove) Harmless() bool { return len(m.Rules) == 0 && len(m.Overlap) == 0 }

// BaseMoveOf compares the move of the base branch from checked (the tip the check read its rules from) to
// tip with the checked change base..head. ruleFiles are the rule files the check read (nil: the
// configuration and the owners files of the packages the change touches, under the checked tip's rules);
// any configuration or owners file the move touches counts too. A configuration that cannot be read at
// the checked tip is a rule change: the checks run again.
func BaseMoveOf(ctx context.Context, repo *gitrepo.Repo, base, head, checked, tip string, ruleFiles []string) (*BaseMove, error) {
	used, st := LoadRules(repo, checked)
	if used == nil {
		return &BaseMove{Rules: []string{config.ConfigFile + " (unreadable at the checked tip: " + st.Err + st.Summary + ")"}}, nil
	}
	mine, err := TouchedPackages(ctx, repo, used.Config, base, head)
	if err != nil {
		return nil, err
	}
	theirs, err := TouchedPackages(ctx, repo, used.Config, checked, tip)
	if err != nil {
		return nil, err
	}
	if ruleFiles == nil {
		ruleFiles = []string{config.ConfigFile}
		for p := range mine.Packages {
			if f := used.Config.OwnersFilePath(p); f != "" {
				ruleFiles = append(ruleFiles, f)
			}
		}
		slices.Sort(ruleFiles[1:])
	}
	m := &BaseMove{}
	if m.Rules, err = rulesMoved(repo, checked, tip, ruleFiles); err != nil {
		return nil, err
	}
	changed := slices.Clone(theirs.Other)
	for _, files := range theirs.Packages {
		changed = append(changed, files...) // an owners file inside a package directory counts too
	}
	slices.Sort(changed)
	for _, p := range slices.Compact(changed) {
		if slices.Contains(ruleFiles, p) {
			continue // compared above
		}
		switch path.Base(p) {
		case config.ConfigFile, config.CIFile, config.OWNERSFile, "OWNERS_ALIASES":
			if !slices.Contains(m.Rules, p) {
				m.Rules = append(m.Rules, p)
			}
		}
	}
	for p := range mine.Packages {
		if theirs.Packages[p] != nil {
			m.Overlap = append(m.Overlap, p)
		}
	}
	slices.Sort(m.Overlap)
	return m, ctx.Err()
}

// rulesMoved lists the rule files that differ between the checked tip and tip (the configuration when
// files is empty).
func rulesMoved(repo *gitrepo.Repo, checked, tip string, files []string) ([]string, error) {
	if len(files) == 0 {
		files = []string{config.ConfigFile}
	}
	a, err := repo.Resolve(checked)
	if err != nil {
		return nil, err
	}
	b, err := repo.Resolve(tip)
	if err != nil {
		return nil, err
	}
	var moved []string
	for _, f := range files {
		da, oka, err := repo.ReadFile(a, f)
		if err != nil {
			return nil, err
		}
		db, okb, err := repo.ReadFile(b, f)
		if err != nil {
			return nil, err
		}
		if oka != okb || !bytes.Equal(da, db) {
			moved = append(moved, f)
		}
	}
	return moved, nil
}
