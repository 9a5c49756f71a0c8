package bot

import (
	"context"
	"fmt"
	"github.com/catalogbot/catalogbot/checks/merge"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/bot/checkrun"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// mergeGroup runs the pipeline on a merge queue group (base_sha..head_sha) and reports a check run on the
// group's head. The group's pull request (named by its merge queue branch) must meet every condition the
// bot itself merges by (its check passed on its head, approvals, no hold, ...): otherwise the group fails
// (groupRefusal), so a merge queue never merges what the bot would not. Ownership was decided on that
// pull request, so the owners stage is reported as skipped here; everything else (validate, graph,
// images) runs on the combined change.
func (jc *jobCtx) mergeGroup(ctx context.Context, t MergeGroupTask) error {
	b := jc.b
	head := t.HeadSHA
	r, err := b.store.StartRun(ctx, jc.job.ID, kindMergeGroup, jc.target.Repo, 0, head)
	if err != nil {
		return err
	}
	r.BaseRef, r.BaseSHA, r.Tip = strings.TrimPrefix(t.HeadRef, "refs/heads/"), t.BaseSHA, t.BaseSHA
	cr := newCheckReporter(jc, r, head)
	if err := cr.start(ctx); err != nil {
		return err
	}
	var rep *report.Report
	refusal, err := jc.groupRefusal(ctx, t)
	if err == nil && refusal != "" {
		rep = &report.Report{Stages: []report.Stage{{Name: "merge-queue", Status: report.Fail, Summary: refusal}}}
	} else if err == nil {
		rep, err = jc.runGroup(ctx, cr, t)
	}
	if ctx.Err() != nil {
		cr.cancelled(context.Cause(ctx))
		return ctx.Err()
	}
	if err != nil {
		if diag.CategoryOf(err) == diag.Infra && jc.job.Attempts < b.cfg.Queue.MaxAttempts {
			return err
		}
		rep = errorReport(err)
	}
	rep.Title = fmt.Sprintf("merge group %s at %s", t.HeadRef, short(head))
	if err := cr.complete(ctx, rep); !checkrun.IsNotOwner(err) {
		return err
	}
	jc.log.Info("merge group check not reported: its run was settled or taken over meanwhile", "run", r.ID)
	return nil
}

// queueBranch is a merge queue group's branch: gh-readonly-queue/<base branch>/pr-<number>-<sha>. Compiled
// on first use, not at start-up (every verb of the one binary runs bot's initialisers).
var queueBranch = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^refs/heads/gh-readonly-queue/(.+)/pr-([0-9]+)-[0-9a-f]{40}$`)
})

// groupRefusal says why the merge group may not merge ("" when it may): its branch must name an open pull
// request into the same base branch whose every merge condition is met, as the bot decides before merging.
func (jc *jobCtx) groupRefusal(ctx context.Context, t MergeGroupTask) (string, error) {
	m := queueBranch().FindStringSubmatch(t.HeadRef)
	if m == nil {
		return fmt.Sprintf("%q is not a merge queue branch naming a pull request: refusing the group", t.HeadRef), nil
	}
	number, err := strconv.Atoi(m[2])
	if err != nil {
		return fmt.Sprintf("%q names no pull request number: refusing the group", t.HeadRef), nil
	}
	pr, err := jc.gh.PullRequest(ctx, jc.repo, number)
	if err != nil {
		return "", err
	}
	switch {
	case pr.State != "open" || pr.Merged:
		return fmt.Sprintf("pull request #%d is %s: refusing the group", number, pr.State), nil
	case pr.BaseRef != m[1]:
		return fmt.Sprintf("pull request #%d is into %q, not the group's %q: refusing the group", number, pr.BaseRef, m[1]), nil
	}
	r, err := jc.b.store.LatestCheck(ctx, jc.target.Repo, number, pr.HeadSHA, pr.BaseRef)
	if err != nil {
		return "", err
	}
	var pol approval.Policy
	if r != nil && r.Settings.Policy != nil {
		pol = *r.Settings.Policy
	}
	res, err := jc.approvalsOf(ctx, pr, pol)
	if err != nil {
		return "", err
	}
	holders, err := jc.b.store.HoldOf(ctx, jc.target.Repo, number)
	if err != nil {
		return "", err
	}
	var unmet []string
	for _, c := range merge.Unmet(jc.b.conditions(pr, r, res, holders)) {
		unmet = append(unmet, strings.SplitN(c.Text, "\n", 2)[0])
	}
	if len(unmet) > 0 {
		return fmt.Sprintf("pull request #%d is not ready to merge (%s): refusing the group", number, strings.Join(unmet, "; ")), nil
	}
	return "", nil
}

func (jc *jobCtx) runGroup(ctx context.Context, cr *checkReporter, t MergeGroupTask) (*report.Report, error) {
	dir, err := jc.fetch(ctx, []string{t.BaseSHA, t.HeadSHA})
	if err != nil {
		return nil, err
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		return nil, err
	}
	for _, sha := range []string{t.BaseSHA, t.HeadSHA} {
		if _, err := repo.SHA(sha); err != nil {
			return nil, diag.InfraError(fmt.Errorf("merge group commit %s is not in the fetched repository: %w", short(sha), err))
		}
	}
	rep, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: t.BaseSHA, Head: t.HeadSHA,
		Membership: &membership{gh: jc.gh, cache: map[string]bool{}}, RemoteOptions: jc.remoteOptions(), Smoke: jc.b.smokeInput(),
		SkipImages: jc.b.cfg.Checks.SkipImages, Observer: cr})
	if err != nil {
		return nil, err
	}
	for i, s := range rep.Stages {
		if s.Name == "owners" {
			rep.Stages[i] = report.Stage{Name: "owners", Status: report.Skipped, Duration: s.Duration,
				Summary: "ownership was checked on each pull request of the group"}
		}
	}
	return rep, nil
}
