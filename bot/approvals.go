package bot

import (
	"context"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/diag"
)

// approvalsOf weighs a pull request's reviews and /approve commands under pol: only those given on the
// current head count, and toward merge.requiredApprovals only those of people who may approve.
func (jc *jobCtx) approvalsOf(ctx context.Context, pr *ghclient.PullRequest, pol approval.Policy) (approval.Result, error) {
	reviews, err := jc.gh.Reviews(ctx, jc.repo, pr.Number)
	if err != nil {
		return approval.Result{}, err
	}
	slash, err := jc.b.store.Approvals(ctx, jc.target.Repo, pr.Number)
	if err != nil {
		return approval.Result{}, err
	}
	cancelled, err := jc.b.store.CancelledApprovals(ctx, jc.target.Repo, pr.Number)
	if err != nil {
		return approval.Result{}, err
	}
	in := approval.Input{Head: pr.HeadSHA, Author: pr.Author, Slash: slash, Cancelled: cancelled, Policy: pol}
	for _, rv := range reviews {
		in.Reviews = append(in.Reviews, approval.Review{User: rv.User, State: rv.State, CommitID: rv.CommitID})
	}
	res, err := approval.Evaluate(ctx, in, jc.lookup())
	if err != nil {
		return approval.Result{}, diag.InfraError(err)
	}
	return res, nil
}

// noteReview applies a review delivery to the /approve records, in the order GitHub delivered them (as
// Prow does): an approving review ends its reviewer's /approve cancel; a review requesting changes, or the
// dismissal of the reviewer's review, withdraws the reviewer's /approve.
func (jc *jobCtx) noteReview(ctx context.Context, t PullRequestTask, pr *ghclient.PullRequest) error {
	if t.ReviewUser == "" {
		return nil
	}
	switch t.ReviewState {
	case "approved":
		return jc.b.store.Reapproved(ctx, t.Repo, pr.Number, t.ReviewUser)
	case "changes_requested", "dismissed":
		return jc.b.store.WithdrawApprovals(ctx, t.Repo, pr.Number, t.ReviewUser)
	}
	return nil
}

// lookup answers team and permission questions with GitHub, once per question per job.
func (jc *jobCtx) lookup() *ghLookup {
	return &ghLookup{membership: membership{gh: jc.gh, cache: map[string]bool{}}, jc: jc, perms: map[string]string{}}
}

type ghLookup struct {
	membership
	jc    *jobCtx
	perms map[string]string
}

func (l *ghLookup) Permission(ctx context.Context, login string) (string, error) {
	k := strings.ToLower(login)
	if p, ok := l.perms[k]; ok {
		return p, nil
	}
	p, err := l.jc.gh.Permission(ctx, l.jc.repo, login)
	if err != nil {
		return "", diag.InfraError(err)
	}
	l.perms[k] = p
	return p, nil
}
