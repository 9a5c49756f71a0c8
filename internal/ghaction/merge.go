package ghaction

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/checks/merge"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// HoldLabel is the label that holds a pull request (the bot's default checks.holdLabel): the Action does
// not merge while it is set.
const HoldLabel = "do-not-merge/hold"

// mergeIfReady gathers the facts of the merge decision (checks/merge, the bot's too) and merges the pull
// request when every condition is met, with the tested head SHA as GitHub's guard (PUT /pulls/{n}/merge
// with sha): a push after the checks makes GitHub refuse. The rules (required approvals and labels, who
// may approve under merge.approvers) come from .catalogbot.yaml on the current tip of the pull request's
// current base branch; the decision holds the run to that base and tip. It returns the merge stage (its
// Details are the conditions, as the bot's readiness comment lists them) and the merge commit ("" when
// not merged). Waiting for a label or an approval is not a failure.
func mergeIfReady(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, local *gitrepo.Repo, ev *event, r *report.Report) (report.Stage, string) {
	pr := ev.PullRequest
	fail := func(status report.Status, err error) (report.Stage, string) {
		return report.Stage{Name: "merge", Status: status, Summary: "not merged", Err: err.Error()}, ""
	}
	now, err := gh.PullRequest(ctx, repo, pr.Number)
	if err != nil {
		return fail(report.Error, err)
	}
	tip, err := gh.BranchSHA(ctx, repo, now.BaseRef)
	if err != nil {
		return fail(report.Error, err)
	}
	f := merge.Facts{
		Check: &merge.Check{Verdict: string(r.Verdict()), HeadSHA: pr.Head.SHA, BaseRef: pr.Base.Ref, BaseTip: pr.Base.SHA},
		Head:  now.HeadSHA, BaseRef: now.BaseRef, BaseTip: tip,
		State: now.State, Merged: now.Merged, Draft: now.Draft, Mergeable: now.Mergeable, Labels: now.Labels,
		HoldLabel: HoldLabel, ConfigFile: config.ConfigFile,
	}
	if _, err := local.Resolve(tip); err != nil {
		return fail(report.Error, fmt.Errorf("the tip %s of %s is not in the checkout (use fetch-depth: 0): %w", short(tip), now.BaseRef, err))
	}
	if tip != pr.Base.SHA && strings.EqualFold(now.BaseRef, pr.Base.Ref) {
		// the base branch moved since the run's check: what the move changed decides (as in the bot)
		base, err := local.MergeBase(pr.Base.SHA, pr.Head.SHA)
		if err != nil {
			return fail(report.Error, err)
		}
		mv, err := pipeline.BaseMoveOf(ctx, local, base, pr.Head.SHA, pr.Base.SHA, tip, nil)
		if err != nil {
			return fail(report.Error, err)
		}
		f.BaseMoveHarmless, f.BaseMoveRules, f.BaseMoveOverlap = mv.Harmless(), mv.Rules, mv.Overlap
	}
	method := config.Default().Merge.Method
	rules, st := pipeline.LoadRules(local, tip)
	if rules == nil {
		f.ConfigError = st.Err
		if f.ConfigError == "" {
			f.ConfigError = st.Summary
		}
	} else {
		cfg := rules.Config
		method, f.RequiredApprovals, f.RequiredLabels = cfg.Merge.Method, cfg.Merge.RequiredApprovals, cfg.Merge.RequiredLabels
		pol, err := policyOf(ctx, local, rules, tip, pr.Head.SHA) // the tested change
		if err != nil {
			return fail(report.Error, err)
		}
		reviews, err := gh.Reviews(ctx, repo, pr.Number)
		if err != nil {
			return fail(report.Error, err)
		}
		if f.Approvals, err = approval.Evaluate(ctx, approval.Input{Head: now.HeadSHA, Author: now.Author, Reviews: reviewsOf(reviews), Policy: pol},
			lookup{gh: gh, repo: repo}); err != nil {
			return fail(report.Error, err)
		}
	}
	cs := merge.Decide(f)
	details := "**Merge conditions:**\n\n" + merge.Markdown(cs)
	if unmet := merge.Unmet(cs); len(unmet) > 0 {
		var ids, texts []string
		for _, c := range unmet {
			ids = append(ids, c.ID)
			texts = append(texts, strings.SplitN(c.Text, "\n", 2)[0])
		}
		r.Outputs["merge_unmet"] = strings.Join(ids, ",")
		return report.Stage{Name: "merge", Status: report.Skipped, Summary: "not merged: " + strings.Join(texts, "; "), Details: details}, ""
	}
	title := fmt.Sprintf("%s (#%d)", now.Title, pr.Number)
	sha, err := gh.Merge(ctx, repo, pr.Number, pr.Head.SHA, method, title)
	var me *ghclient.MergeError
	switch {
	case errors.As(err, &me):
		st, _ := fail(report.Fail, err)
		st.Details = details
		return st, ""
	case err != nil:
		return fail(report.Error, err)
	}
	return report.Stage{Name: "merge", Status: report.Pass, Details: details,
		Summary: fmt.Sprintf("merged %s into %s as %s (%s)", short(pr.Head.SHA), now.BaseRef, short(sha), method)}, sha
}

// policyOf is who may approve the change from the merge base of tip and head to head, under the rules of
// tip (as the bot weighs it).
func policyOf(ctx context.Context, local *gitrepo.Repo, rules *pipeline.Rules, tip, head string) (approval.Policy, error) {
	base, err := local.MergeBase(tip, head)
	if err != nil {
		return approval.Policy{}, err
	}
	pkgs, outside, err := rules.ChangedPackages(ctx, local, base, head)
	if err != nil {
		return approval.Policy{}, err
	}
	return rules.ApprovalPolicy(local, pkgs, outside)
}

func reviewsOf(rs []ghclient.Review) []approval.Review {
	var out []approval.Review
	for _, rv := range rs {
		out = append(out, approval.Review{User: rv.User, State: rv.State, CommitID: rv.CommitID})
	}
	return out
}

// lookup answers approval's team and permission questions with the workflow's token.
type lookup struct {
	gh   ghclient.GitHub
	repo ghclient.Repo
}

func (l lookup) IsMember(ctx context.Context, org, team, login string) (bool, error) {
	return l.gh.IsTeamMember(ctx, org, team, login)
}

func (l lookup) Permission(ctx context.Context, login string) (string, error) {
	return l.gh.Permission(ctx, l.repo, login)
}
