package pipeline

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/report"
)

// Change is one prepared change, computed once per check and handed to every stage and to the merge
// decision: what it lands on, what lands, the changed files, their packages and the layout. Nothing
// re-derives them later.
type Change struct {
	Repo *gitrepo.Repo
	// Rules are the configuration and owners files that decide the change (the base branch's tip's).
	Rules *Rules
	// Base is what the change lands on: the base branch's tip (the start of the range for a plain range).
	Base *object.Commit
	// Head is the pull request's head (the end of the range).
	Head *object.Commit
	// Result is what lands: the merge of Head into Base (PrepareMerge), or Head (PrepareRange); nil when
	// the merge conflicts.
	Result *object.Commit
	// Conflicts are the paths that do not merge (sorted; the stages cannot run on a tree that does not
	// exist).
	Conflicts []string
	// Layout is the repository's catalogs under Rules, at Base and Result.
	Layout *Layout
	// Attribution is the files Base..Result by package (Layout.Attribute).
	Attribution *Attribution

	changes *changes
}

// PrepareMerge prepares the merge of head into tip (the base branch's tip) under rules: every stage
// judges what GitHub lands when it merges the pull request now, against tip, never the head's tree alone
// or the merge base the author picked. It writes the merge commit into repo's object store.
func PrepareMerge(ctx context.Context, repo *gitrepo.Repo, rules *Rules, tip, head string) (*Change, error) {
	c, err := resolvePair(repo, tip, head)
	if err != nil {
		return nil, err
	}
	c.Rules = rules
	m, err := repo.Merge(ctx, c.Base, c.Head)
	if err != nil {
		return nil, err
	}
	if c.Result, c.Conflicts = m.Commit, m.Conflicts; c.Result == nil {
		return c, nil
	}
	return c, c.prepare(ctx)
}

// PrepareRange prepares the range base..head as it is (the command line's pull request of a local
// range); nil rules load them from base.
func PrepareRange(ctx context.Context, repo *gitrepo.Repo, rules *Rules, base, head string) (*Change, error) {
	c, err := resolvePair(repo, base, head)
	if err != nil {
		return nil, err
	}
	c.Rules, c.Result = rules, c.Head
	return c, c.prepare(ctx)
}

func resolvePair(repo *gitrepo.Repo, base, head string) (*Change, error) {
	b, err := repo.Resolve(base)
	if err != nil {
		return nil, err
	}
	h, err := repo.Resolve(head)
	if err != nil {
		return nil, err
	}
	return &Change{Repo: repo, Base: b, Head: h}, nil
}

// prepare computes the layout, the changed paths and their attribution from Base to Result.
func (c *Change) prepare(ctx context.Context) error {
	cfg := c.Rules.Config
	var err error
	if c.Layout, err = LayoutAt(cfg, c.Base, c.Result); err != nil {
		return err
	}
	if c.changes, err = changesOf(ctx, c.Repo, cfg, c.Base, c.Result); err != nil {
		return err
	}
	c.Attribution, err = c.Layout.Attribute(ctx, c.Repo, c.Base, c.Result, c.changes.paths)
	return err
}

// Packages are the packages the change touches (by package identity, as the owners stage attributes
// them), sorted.
func (c *Change) Packages() []string {
	if c.Attribution == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.Attribution.Packages))
}

// Outside tells whether the change touches paths no package holds (only maintainers may approve it). A
// merge that conflicts touches nothing known: only maintainers may approve it.
func (c *Change) Outside() bool {
	return c.Attribution == nil || len(c.Attribution.Other) > 0
}

// ApprovalPolicy says who may approve the change (Rules.ApprovalPolicy over its packages). The bot and
// the Action both weigh approvals by it.
func (c *Change) ApprovalPolicy() (approval.Policy, error) {
	return c.Rules.ApprovalPolicy(c.Repo, c.Packages(), c.Outside())
}

// conflictStage is the report's one stage when the head does not merge into the base's tip.
func (c *Change) conflictStage() report.Stage {
	st := report.Stage{Name: "merge-result", Status: report.Fail,
		Summary: fmt.Sprintf("the head %s does not merge cleanly into the base branch's tip %s (%d conflicting paths): merge or rebase the branch onto the base so that its merge can be checked",
			short(c.Head.Hash.String()), short(c.Base.Hash.String()), len(c.Conflicts))}
	for _, p := range c.Conflicts {
		st.Diagnostics = append(st.Diagnostics, diag.Diagnostic{Severity: diag.Error, Check: "merge", Rule: "merge-conflict", File: p,
			Message: "changed by the pull request and by the base branch in ways that do not merge",
			Hint:    "merge the base branch into the pull request's branch (or rebase it) and resolve the conflict"})
	}
	return st
}

// changes is what the change touched.
type changes struct {
	paths      []string // every changed path (repository-relative)
	refEntries []string // touched reference names
	refsGlobal bool     // the references config's top-level fields changed
}

// changesOf lists the changed paths and the references config's changed entries; which packages the
// paths belong to is the layout's to say (Layout.Attribute).
func changesOf(ctx context.Context, repo *gitrepo.Repo, cfg *config.Config, base, head *object.Commit) (*changes, error) {
	paths, err := repo.Changed(ctx, base, head)
	if err != nil {
		return nil, err
	}
	c := &changes{paths: paths}
	if f := cfg.References.File; f != "" && slices.Contains(paths, f) {
		if c.refEntries, c.refsGlobal, err = referenceChanges(repo, f, base, head); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// referenceChanges compares the references config file field by field between base and head: the names
// of added, removed or changed entries, and whether its top-level fields changed.
func referenceChanges(repo *gitrepo.Repo, file string, base, head *object.Commit) (names []string, global bool, err error) {
	read := func(c *object.Commit) (*render.Config, error) {
		data, ok, err := repo.ReadFile(c, file)
		if err != nil || !ok {
			return &render.Config{}, err
		}
		cfg, _ := render.ParseConfig(data, file)
		if cfg == nil {
			cfg = &render.Config{}
		}
		return cfg, nil
	}
	b, err := read(base)
	if err != nil {
		return nil, false, err
	}
	h, err := read(head)
	if err != nil {
		return nil, false, err
	}
	global = b.Name != h.Name || b.Repo != h.Repo || b.Tag != h.Tag
	old := map[string]string{}
	for _, r := range b.References {
		old[r.Name] = r.Image
	}
	seen := map[string]bool{}
	for _, r := range h.References {
		seen[r.Name] = true
		if img, ok := old[r.Name]; !ok || img != r.Image {
			names = append(names, r.Name)
		}
	}
	for n := range old {
		if !seen[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, global, nil
}
