package ghaction

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// mergeIfReady merges the pull request when the run passed and every merge rule holds, with the tested
// head SHA as GitHub's guard (PUT /pulls/{n}/merge with sha): a push after the checks makes GitHub refuse.
// The rules come from .catalogbot.yaml on the base branch's current tip, which must be the base the
// checks ran against; a configuration that does not parse blocks the merge. It returns the merge stage
// and the merge commit ("" when not merged). Waiting for a label or an approval is not a failure.
func mergeIfReady(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, local *gitrepo.Repo, ev *event, r *report.Report, approved []string) (report.Stage, string) {
	pr := ev.PullRequest
	wait := func(format string, args ...any) (report.Stage, string) {
		return report.Stage{Name: "merge", Status: report.Skipped, Summary: "not merged: " + fmt.Sprintf(format, args...)}, ""
	}
	fail := func(status report.Status, err error) (report.Stage, string) {
		return report.Stage{Name: "merge", Status: status, Summary: "not merged", Err: err.Error()}, ""
	}
	if v := r.Verdict(); v != report.Pass {
		return wait("the checks are %s", v)
	}
	now, err := gh.PullRequest(ctx, repo, pr.Number)
	if err != nil {
		return fail(report.Error, err)
	}
	switch {
	case now.State != "open" || now.Merged:
		return wait("#%d is %s", pr.Number, now.State)
	case now.Draft:
		return wait("#%d is a draft", pr.Number)
	case now.HeadSHA != pr.Head.SHA:
		return wait("the head moved to %s after the checks of %s; its own run checks it", short(now.HeadSHA), short(pr.Head.SHA))
	}
	tip, err := gh.BranchSHA(ctx, repo, now.BaseRef)
	if err != nil {
		return fail(report.Error, err)
	}
	if tip != pr.Base.SHA {
		return wait("%s moved to %s after the checks ran against %s; run the checks again", now.BaseRef, short(tip), short(pr.Base.SHA))
	}
	cfg, err := strictConfig(local, tip)
	if err != nil {
		return fail(report.ActionRequired, err)
	}
	var missing []string
	for _, l := range cfg.Merge.RequiredLabels {
		if !now.HasLabel(l) {
			missing = append(missing, l)
		}
	}
	if len(missing) > 0 {
		return wait("waiting for the label(s) %s", strings.Join(missing, ", "))
	}
	counted, err := mayApprove(ctx, gh, repo, cfg, approved)
	if err != nil {
		return fail(report.Error, err)
	}
	if len(counted) < cfg.Merge.RequiredApprovals {
		return wait("%d of %d required approvals on %s (counted: %s; approvals count from maintainers and users with write access, given on this head)",
			len(counted), cfg.Merge.RequiredApprovals, short(pr.Head.SHA), orNone(counted))
	}
	title := fmt.Sprintf("%s (#%d)", now.Title, pr.Number)
	sha, err := gh.Merge(ctx, repo, pr.Number, pr.Head.SHA, cfg.Merge.Method, title)
	var me *ghclient.MergeError
	switch {
	case errors.As(err, &me):
		return fail(report.Fail, err)
	case err != nil:
		return fail(report.Error, err)
	}
	return report.Stage{Name: "merge", Status: report.Pass, Summary: fmt.Sprintf("merged %s into %s as %s (%s)", short(pr.Head.SHA), now.BaseRef, short(sha), cfg.Merge.Method)}, sha
}

// strictConfig parses .catalogbot.yaml at sha: unlike the checks' fallback, a file that does not parse is
// an error, never the defaults (which would drop requiredApprovals and requiredLabels).
func strictConfig(repo *gitrepo.Repo, sha string) (*config.Config, error) {
	c, err := repo.Resolve(sha)
	if err != nil {
		return nil, fmt.Errorf("the base tip %s is not in the checkout (use fetch-depth: 0): %w", short(sha), err)
	}
	return pipeline.ConfigAt(repo, c)
}

// mayApprove keeps the approvers whose approval counts toward merge.requiredApprovals: maintainers (logins
// or org/team) and users with write access to the repository.
func mayApprove(ctx context.Context, gh ghclient.GitHub, repo ghclient.Repo, cfg *config.Config, approved []string) ([]string, error) {
	var out []string
	for _, login := range approved {
		ok := false
		for _, m := range cfg.Maintainers {
			if org, team, isTeam := strings.Cut(m, "/"); isTeam {
				member, err := gh.IsTeamMember(ctx, org, team, login)
				if err != nil {
					return nil, err
				}
				ok = ok || member
			} else if strings.EqualFold(m, login) {
				ok = true
			}
			if ok {
				break
			}
		}
		if !ok {
			perm, err := gh.Permission(ctx, repo, login)
			if err != nil {
				return nil, err
			}
			ok = slices.Contains([]string{"admin", "maintain", "write"}, perm)
		}
		if ok {
			out = append(out, login)
		}
	}
	return out, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
