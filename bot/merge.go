package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/checks/merge"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/report"
)

// evaluate re-evaluates a pull request's merge readiness, keeps its comment up to date and merges it when
// every condition is met. Evaluate jobs of one repository run one at a time, so merges never race.
func (jc *jobCtx) evaluate(ctx context.Context, t PullRequestTask) error {
	b := jc.b
	number := t.PR
	if sha, err := b.store.Merged(ctx, jc.target.Repo, number); err != nil || sha != "" {
		return err // merged already: never twice
	}
	pr, err := jc.gh.PullRequest(ctx, jc.repo, number)
	if err != nil {
		return err
	}
	if pr.State != "open" || pr.Merged {
		return nil
	}
	// A check counts only against the base it ran against: a pull request retargeted after its check
	// (edited with changes.base) is checked again against its new base before anything merges.
	r, err := b.store.LatestCheck(ctx, jc.target.Repo, number, pr.HeadSHA, pr.BaseRef)
	if err != nil {
		return err
	}
	if err := jc.noteReview(ctx, t, pr); err != nil {
		return err
	}
	// Approvals are weighed by the policy the check recorded from the base branch's tip; without a check
	// of the head, nobody's approval counts yet.
	var pol approval.Policy
	if r != nil && r.Settings.Policy != nil {
		pol = *r.Settings.Policy
	}
	res, err := jc.approvalsOf(ctx, pr, pol)
	if err != nil {
		return err
	}
	holders, err := jc.holdOf(ctx, t, pr) // the history, read now
	if err != nil {
		return err
	}
	conds := func(r *store.Run) []merge.Condition { return b.conditions(pr, r, res, holders) }
	rerun := func(reason, delivery string) error {
		jc.log.Info("re-running the checks", "pr", number, "reason", reason)
		// The comment first: once enqueued, the check may start at once.
		if err := jc.upsertComment(ctx, number, readinessBody("⏳ checking", conds(nil), "_"+reason+": the checks run again._")); err != nil {
			return err
		}
		return jc.enqueue(ctx, kindCheck, delivery, PullRequestTask{Target: jc.target, PR: number, Reason: reason})
	}
	if r == nil {
		pending, err := b.queue.Pending(ctx, prKey(jc.target.Repo, number))
		if err != nil {
			return err
		}
		if pending > 0 {
			return jc.upsertComment(ctx, number, readinessBody("⏳ checking", conds(nil)))
		}
		return rerun(fmt.Sprintf("no check of the head %s against `%s` was recorded", short(pr.HeadSHA), pr.BaseRef),
			fmt.Sprintf("evaluate:%d:head:%s:%s", jc.job.ID, pr.HeadSHA, pr.BaseRef))
	}
	if r.Verdict != string(report.Pass) && ownersFailed(r) && !slices.Equal(res.Current, r.Approvers) {
		return rerun("approvals changed since the owners check failed", fmt.Sprintf("evaluate:%d:approvers:%s", jc.job.ID, strings.Join(res.Current, ",")))
	}
	// The check weighed approvals (the owners stage may have allowed the change on one) that are gone now:
	// withdrawn, dismissed, a review requesting changes, /approve cancel. It no longer holds.
	if gone := merge.Withdrawn(r.Approvers, res.Current); len(gone) > 0 {
		b.metrics.merges.WithLabelValues("approvals_withdrawn_rerun").Inc()
		return rerun(fmt.Sprintf("approvals the check weighed were withdrawn (%s)", strings.Join(gone, ", ")),
			fmt.Sprintf("evaluate:%d:withdrawn:%s", r.ID, strings.Join(res.Current, ",")))
	}
	cs := conds(r)
	if !merge.Ready(cs) {
		return jc.upsertComment(ctx, number, readinessBody("⏳ not ready to merge", cs))
	}
	// The check ran on the merge of the head into the base's tip then: it is what lands only while the tip
	// is still that one (GitHub's merge pins the head with its sha guard). Read the tip just before
	// merging; when it moved, the checks run again on the merge into the new tip.
	tip, err := jc.gh.BranchSHA(ctx, jc.repo, r.BaseRef)
	if err != nil {
		return err
	}
	if tip != r.Tip {
		b.metrics.merges.WithLabelValues("base_moved_rerun").Inc()
		return rerun(fmt.Sprintf("the base branch moved to %s after the check of the merge into %s", short(tip), short(r.Tip)), fmt.Sprintf("base-moved:%d:%s", r.ID, tip))
	}
	return jc.merge(ctx, pr, r, cs)
}

func ownersFailed(r *store.Run) bool {
	if r.Report == nil {
		return false
	}
	for _, s := range r.Report.Stages {
		if s.Name == "owners" && s.Status == report.Fail {
			return true
		}
	}
	return false
}

// merge merges the tested head (the sha guard makes GitHub refuse if the head moved) and classifies a
// refusal by its status code.
func (jc *jobCtx) merge(ctx context.Context, pr *ghclient.PullRequest, r *store.Run, cs []merge.Condition) error {
	b := jc.b
	method := r.Settings.MergeMethod
	if method == "" {
		method = config.Default().Merge.Method
	}
	title := fmt.Sprintf("%s (#%d)", pr.Title, pr.Number)
	sha, err := jc.gh.Merge(ctx, jc.repo, pr.Number, r.HeadSHA, method, title)
	var me *ghclient.MergeError
	switch {
	case err == nil:
		b.metrics.merges.WithLabelValues("merged").Inc()
		if err := b.store.RecordMerge(ctx, jc.target.Repo, pr.Number, r.HeadSHA, sha); err != nil {
			return err
		}
		jc.log.Info("merged", "pr", pr.Number, "head", r.HeadSHA, "merge_commit", sha)
		return jc.upsertComment(ctx, pr.Number, readinessBody("✅ merged", cs,
			fmt.Sprintf("Merged %s into %s as %s (%s).", short(r.HeadSHA), report.CodeSpan(pr.BaseRef), short(sha), method)))
	case errors.As(err, &me):
		var note string
		switch me.Status {
		case 409:
			b.metrics.merges.WithLabelValues("head_moved").Inc()
			note = fmt.Sprintf("Not merged: the head moved after %s was tested (409); the new head is checked next.", short(r.HeadSHA))
		case 405:
			// A retried merge whose first attempt went through is also refused: look before reporting.
			if now, gerr := jc.gh.PullRequest(ctx, jc.repo, pr.Number); gerr == nil && now.Merged {
				b.metrics.merges.WithLabelValues("merged").Inc()
				if err := b.store.RecordMerge(ctx, jc.target.Repo, pr.Number, r.HeadSHA, "(merged)"); err != nil {
					return err
				}
				return jc.upsertComment(ctx, pr.Number, readinessBody("✅ merged", cs, fmt.Sprintf("Merged %s into %s.", short(r.HeadSHA), report.CodeSpan(pr.BaseRef))))
			}
			b.metrics.merges.WithLabelValues("not_mergeable").Inc()
			note = "Not merged: GitHub reports the pull request is not mergeable (405): branch protection, required checks or conflicts."
		default:
			b.metrics.merges.WithLabelValues("unprocessable").Inc()
			note = fmt.Sprintf("Not merged: GitHub could not process the merge (%d); check that the %s merge method is allowed.", me.Status, report.CodeSpan(method))
		}
		jc.log.Warn("merge refused", "pr", pr.Number, "status", me.Status, "reason", me.Reason())
		return jc.upsertComment(ctx, pr.Number, readinessBody("⚠️ merge refused", cs, note))
	default:
		return err
	}
}
