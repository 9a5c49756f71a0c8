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
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// HoldLabel is the label that holds a pull request (the bot's default checks.holdLabel): the Action does
// not merge while it is set.
const HoldLabel = "do-not-merge/hold"

// checked is what the run's check judged: the prepared change (the merge of the head into tip; nil when
// tip's configuration is invalid, configError says why) and the approvals it weighed.
type checked struct {
	change      *pipeline.Change
	configError string
	tip         string
	approvers   []string
}

// mergeIfReady gathers the facts of the merge decision (checks/merge, the bot's too) and merges the pull
// request when every condition is met, with the tested head SHA as GitHub's guard (PUT /pulls/{n}/merge
// with sha): a push after the checks makes GitHub refuse. The check ran on the merge of the head into the
// base branch's tip it read; the tip is read again just before merging and a tip that moved is not merged
// over (the checks must run again on the merge into it). The rules (required approvals and labels, who
// may approve under merge.approvers) are that tip's .catalogbot.yaml; approvals are read again now. It
// returns the merge stage (its Details are the conditions, as the bot's readiness comment lists them) and
// the merge commit ("" when not merged). Waiting for a label or an approval is not a failure.
func mergeIfReady(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, c checked, ev *event, r *report.Report) (report.Stage, string) {
	pr := ev.PullRequest
	fail := func(status report.Status, err error) (report.Stage, string) {
		return report.Stage{Name: "merge", Status: status, Summary: "not merged", Err: err.Error()}, ""
	}
	now, err := gh.PullRequest(ctx, repo, pr.Number)
	if err != nil {
		return fail(report.Error, err)
	}
	f := merge.Facts{
		Check: &merge.Check{Verdict: string(r.Verdict()), HeadSHA: pr.Head.SHA, BaseRef: pr.Base.Ref, BaseTip: c.tip},
		Head:  now.HeadSHA, BaseRef: now.BaseRef,
		State: now.State, Merged: now.Merged, Draft: now.Draft, Mergeable: now.Mergeable, Labels: now.Labels,
		HoldLabel: HoldLabel, ConfigFile: config.ConfigFile,
	}
	method := config.Default().Merge.Method
	if c.change == nil {
		f.ConfigError = c.configError
	} else {
		f.Check.Approvers = c.approvers // weighed again below, read now
		cfg := c.change.Rules.Config
		method, f.RequiredApprovals, f.RequiredLabels = cfg.Merge.Method, cfg.Merge.RequiredApprovals, cfg.Merge.RequiredLabels
		pol, err := c.change.ApprovalPolicy()
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
	// the tip last, just before the merge: the check is of the merge into c.tip (a pull request retargeted
	// since is refused as checked against another base)
	if strings.EqualFold(now.BaseRef, pr.Base.Ref) {
		if f.BaseTip, err = gh.BranchSHA(ctx, repo, now.BaseRef); err != nil {
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
