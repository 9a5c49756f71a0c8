package ghclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/google/go-github/v92/github"
)

// client implements GitHub with go-github.
type client struct {
	gh    *github.Client
	token func(context.Context) (string, error)
	// retries and backoff bound the look-ups and re-creates after an unsure create (creates.go).
	retries int
	backoff time.Duration
}

// wrap names the call and keeps the HTTP status reachable through StatusOf.
func wrap(resp *github.Response, err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf(format+": %w", append(args, err)...)
	if resp != nil && resp.Response != nil {
		return &httpStatusError{status: resp.StatusCode, err: err}
	}
	return err
}

func (c *client) PullRequest(ctx context.Context, repo Repo, number int) (*PullRequest, error) {
	pr, resp, err := c.gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return nil, wrap(resp, err, "get pull request %s#%d", repo, number)
	}
	return pullRequestOf(pr), nil
}

// pullRequestOf is what the bot keeps of go-github's pull request.
func pullRequestOf(pr *github.PullRequest) *PullRequest {
	out := &PullRequest{
		Number: pr.GetNumber(), Title: pr.GetTitle(), State: pr.GetState(), Draft: pr.GetDraft(), Merged: pr.GetMerged(),
		Mergeable: pr.Mergeable, Author: pr.GetUser().GetLogin(),
		HeadSHA: pr.GetHead().GetSHA(), HeadRef: pr.GetHead().GetRef(), BaseRef: pr.GetBase().GetRef(), BaseSHA: pr.GetBase().GetSHA(),
		HTMLURL: pr.GetHTMLURL(),
	}
	for _, l := range pr.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

func (c *client) PullRequestsForCommit(ctx context.Context, repo Repo, sha string) ([]int, error) {
	var out []int
	opts := &github.ListOptions{PerPage: 100}
	for {
		prs, resp, err := c.gh.PullRequests.ListPullRequestsWithCommit(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return nil, wrap(resp, err, "list pull requests of %s in %s", sha, repo)
		}
		for _, pr := range prs {
			if pr.GetState() == "open" && pr.GetHead().GetSHA() == sha {
				out = append(out, pr.GetNumber())
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (c *client) Reviews(ctx context.Context, repo Repo, number int) ([]Review, error) {
	var out []Review
	opts := &github.ListOptions{PerPage: 100}
	for {
		rs, resp, err := c.gh.PullRequests.ListReviews(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, wrap(resp, err, "list reviews of %s#%d", repo, number)
		}
		for _, r := range rs {
			out = append(out, Review{User: r.GetUser().GetLogin(), State: r.GetState(), CommitID: r.GetCommitID()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Optional is s as go-github's optional fields take it: nil for "" (not sent).
func Optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (c *client) Comments(ctx context.Context, repo Repo, number int) ([]Comment, error) {
	var out []Comment
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		cs, resp, err := c.gh.Issues.ListComments(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, wrap(resp, err, "list comments of %s#%d", repo, number)
		}
		for _, cm := range cs {
			out = append(out, Comment{ID: cm.GetID(), User: cm.GetUser().GetLogin(), Body: cm.GetBody()})
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func (c *client) createComment(ctx context.Context, repo Repo, number int, body string) (int64, error) {
	cm, resp, err := c.gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, number, github.IssueCommentRequest{Body: body})
	if err != nil {
		return 0, wrap(resp, err, "comment on %s#%d", repo, number)
	}
	return cm.GetID(), nil
}

func (c *client) EditComment(ctx context.Context, repo Repo, id int64, body string) error {
	_, resp, err := c.gh.Issues.UpdateComment(ctx, repo.Owner, repo.Name, id, github.IssueCommentRequest{Body: body})
	return wrap(resp, err, "edit comment %d in %s", id, repo)
}

func (c *client) React(ctx context.Context, repo Repo, commentID int64, content string) error {
	_, resp, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, repo.Owner, repo.Name, commentID, content)
	return wrap(resp, err, "react %q to comment %d in %s", content, commentID, repo)
}

func (c *client) AddLabel(ctx context.Context, repo Repo, number int, label string) error {
	_, resp, err := c.gh.Issues.AddLabelsToIssue(ctx, repo.Owner, repo.Name, number, []string{label})
	return wrap(resp, err, "add label %q to %s#%d", label, repo, number)
}

func (c *client) RemoveLabel(ctx context.Context, repo Repo, number int, label string) error {
	// go-github puts the name in the path as is: escape it ("do-not-merge/hold" has a slash).
	resp, err := c.gh.Issues.RemoveLabelForIssue(ctx, repo.Owner, repo.Name, number, url.PathEscape(label))
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil // not there: the goal is reached
	}
	return wrap(resp, err, "remove label %q from %s#%d", label, repo, number)
}

func (c *client) Merge(ctx context.Context, repo Repo, number int, sha, method, title string) (string, error) {
	res, resp, err := c.gh.PullRequests.Merge(ctx, repo.Owner, repo.Name, number, "",
		&github.PullRequestOptions{SHA: sha, MergeMethod: method, CommitTitle: title})
	if err != nil {
		if resp != nil {
			switch resp.StatusCode {
			case http.StatusMethodNotAllowed, http.StatusConflict, http.StatusUnprocessableEntity:
				return "", &MergeError{Status: resp.StatusCode, Err: fmt.Errorf("merge %s#%d at %s: %w", repo, number, sha, err)}
			}
		}
		return "", wrap(resp, err, "merge %s#%d at %s", repo, number, sha)
	}
	return res.GetSHA(), nil
}

func (c *client) CreateStatus(ctx context.Context, repo Repo, sha string, st Status) error {
	_, resp, err := c.gh.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, github.RepoStatus{
		State: new(st.State), TargetURL: Optional(st.TargetURL), Description: Optional(st.Description), Context: new(st.Context)})
	return wrap(resp, err, "set status %q on %s in %s", st.Context, sha, repo)
}

func (c *client) FindPullRequest(ctx context.Context, repo Repo, branch string) (*PullRequest, error) {
	prs, resp, err := c.gh.PullRequests.List(ctx, repo.Owner, repo.Name, &github.PullRequestListOptions{
		State: "all", Head: repo.Owner + ":" + branch, ListOptions: github.ListOptions{PerPage: 100}})
	if err != nil {
		return nil, wrap(resp, err, "list pull requests of branch %s in %s", branch, repo)
	}
	for _, pr := range prs { // newest first
		if pr.GetHead().GetRef() == branch && strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), repo.String()) {
			return pullRequestOf(pr), nil
		}
	}
	return nil, nil
}

func (c *client) createPullRequest(ctx context.Context, repo Repo, np NewPullRequest) (*PullRequest, error) {
	pr, resp, err := c.gh.PullRequests.Create(ctx, repo.Owner, repo.Name, github.CreatePullRequest{
		Title: new(np.Title), Body: new(np.Body), Head: np.Head, Base: np.Base})
	if err != nil {
		return nil, wrap(resp, err, "open a pull request of %s into %s in %s", np.Head, np.Base, repo)
	}
	return pullRequestOf(pr), nil
}

func (c *client) BranchSHA(ctx context.Context, repo Repo, branch string) (string, error) {
	ref, resp, err := c.gh.Git.GetRef(ctx, repo.Owner, repo.Name, "heads/"+branch)
	if err != nil {
		return "", wrap(resp, err, "get branch %s of %s", branch, repo)
	}
	return ref.GetObject().GetSHA(), nil
}

func (c *client) IsTeamMember(ctx context.Context, org, team, login string) (bool, error) {
	m, resp, err := c.gh.Teams.GetTeamMembershipBySlug(ctx, org, team, login)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, wrap(resp, err, "membership of %s in %s/%s", login, org, team)
	}
	return m.GetState() == "active", nil
}

func (c *client) Permission(ctx context.Context, repo Repo, login string) (string, error) {
	p, resp, err := c.gh.Repositories.GetPermissionLevel(ctx, repo.Owner, repo.Name, login)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return "none", nil
	}
	if err != nil {
		return "", wrap(resp, err, "permission of %s on %s", login, repo)
	}
	if p.RoleName != nil {
		return p.GetRoleName(), nil
	}
	return p.GetPermission(), nil
}

func (c *client) GitToken(ctx context.Context) (string, error) {
	tok, err := c.token(ctx)
	if err != nil {
		return "", fmt.Errorf("installation token for git: %w", err)
	}
	return tok, nil
}
