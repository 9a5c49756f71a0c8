package bot

import (
	"context"
	"fmt"
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
	slash, err := jc.b.store.approvals(ctx, jc.task.Repo, pr.Number)
	if err != nil {
		return approval.Result{}, err
	}
	in := approval.Input{Head: pr.HeadSHA, Author: pr.Author, Slash: slash, Policy: pol}
	for _, rv := range reviews {
		in.Reviews = append(in.Reviews, approval.Review{User: rv.User, State: rv.State, CommitID: rv.CommitID})
	}
	res, err := approval.Evaluate(ctx, in, jc.lookup())
	if err != nil {
		return approval.Result{}, diag.InfraError(err)
	}
	return res, nil
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

// approvalText is the approvals condition: how many count of how many are required, whose approval
// would count, whose did not, and which a push dropped.
func approvalText(res approval.Result, required int) string {
	have := len(res.Counted)
	text := fmt.Sprintf("%d of %d required approvals", min(have, required), required)
	if have > 0 {
		text += " (" + strings.Join(res.Counted, ", ") + ")"
	}
	if len(res.CouldApprove) > 0 {
		text += "\n  - approvals that count: " + strings.Join(res.CouldApprove, ", ")
	} else {
		text += "\n  - no one may approve this change under the base branch's configuration"
	}
	if len(res.Ineligible) > 0 {
		text += "\n  - not counted (may not approve this change): " + strings.Join(res.Ineligible, ", ")
	}
	return text
}

// staleText says which approvals a push dropped ("" when none).
func staleText(res approval.Result) string {
	if len(res.Stale) == 0 {
		return ""
	}
	var parts []string
	for _, s := range res.Stale {
		parts = append(parts, fmt.Sprintf("%s (on %s)", s.User, short(s.SHA)))
	}
	return "Approvals given on an earlier head no longer count (a push drops them): " + strings.Join(parts, ", ") +
		". Approve the current head again."
}
