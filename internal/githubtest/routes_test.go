package githubtest

import (
	"testing"

	"github.com/google/go-github/v92/github"
)

// TestEveryRouteThroughGoGitHub drives every modelled operation with go-github, so every answer passes the
// fake's response-schema self-check (which would fail this test), and checks that no route is left out.
func TestEveryRouteThroughGoGitHub(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	c := ctx(t)
	s.SetActor("release-bot[bot]")
	n := s.AddPullRequest(repo, PullRequest{Title: "Add foo", Body: "adds foo", Draft: true, Labels: []string{"a"}, Files: []File{{Name: "catalog/foo/catalog.yaml"}}})
	s.SetMergeable(repo, n, nil) // GitHub still computing: merge is attempted anyway
	s.SetRef(repo, "refs/tags/v1", fakeSHA("v1"))
	s.PushHead(repo, n, fakeSHA("second push"))
	head := s.PullRequest(repo, n).HeadSHA
	s.AddReview(repo, n, Review{User: "bob", State: "COMMENTED", Body: "nice"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	_, _, err := gh.Repositories.Get(c, "octo", "catalog")
	must(err)
	_, _, err = gh.PullRequests.List(c, "octo", "catalog", &github.PullRequestListOptions{State: "all", Base: "main"})
	must(err)
	pr, _, err := gh.PullRequests.Get(c, "octo", "catalog", n)
	must(err)
	if pr.Mergeable != nil || pr.GetMergeableState() != "unknown" || !pr.GetDraft() || pr.GetHead().GetSHA() != head {
		t.Errorf("pull request %+v", pr)
	}
	_, _, err = gh.PullRequests.ListFiles(c, "octo", "catalog", n, nil)
	must(err)
	_, _, err = gh.PullRequests.ListReviews(c, "octo", "catalog", n, nil)
	must(err)
	prs, _, err := gh.PullRequests.ListPullRequestsWithCommit(c, "octo", "catalog", head, nil)
	must(err)
	if len(prs) != 1 {
		t.Errorf("pull requests with %s: %d", head, len(prs))
	}

	cr, _, err := gh.Checks.CreateCheckRun(c, "octo", "catalog", github.CreateCheckRunOptions{Name: "v", HeadSHA: head, DetailsURL: new("https://ci.example/1"), ExternalID: new("1")})
	must(err)
	_, _, err = gh.Checks.UpdateCheckRun(c, "octo", "catalog", cr.GetID(), github.UpdateCheckRunOptions{Name: "v", Status: new("in_progress")})
	must(err)
	got, _, err := gh.Checks.GetCheckRun(c, "octo", "catalog", cr.GetID())
	must(err)
	if got.GetStatus() != "in_progress" || got.GetDetailsURL() != "https://ci.example/1" {
		t.Errorf("check run %+v", got)
	}
	_, _, err = gh.Checks.ListCheckRunsForRef(c, "octo", "catalog", head, &github.ListCheckRunsOptions{Filter: new("all"), Status: new("in_progress")})
	must(err)

	cm, _, err := gh.Issues.CreateComment(c, "octo", "catalog", n, github.IssueCommentRequest{Body: "hello"})
	must(err)
	if cm.GetUser().GetLogin() != "release-bot[bot]" {
		t.Errorf("comment by %s, want the actor", cm.GetUser().GetLogin())
	}
	_, _, err = gh.Issues.UpdateComment(c, "octo", "catalog", cm.GetID(), github.IssueCommentRequest{Body: "hello again"})
	must(err)
	_, _, err = gh.Issues.GetComment(c, "octo", "catalog", cm.GetID())
	must(err)
	_, _, err = gh.Reactions.CreateIssueCommentReaction(c, "octo", "catalog", cm.GetID(), "rocket")
	must(err)
	reactions, _, err := gh.Reactions.ListIssueCommentReactions(c, "octo", "catalog", cm.GetID(), &github.ListReactionOptions{Content: "rocket"})
	must(err)
	if len(reactions) != 1 {
		t.Errorf("%d rocket reactions", len(reactions))
	}
	_, _, err = gh.Issues.ListComments(c, "octo", "catalog", n, nil)
	must(err)
	_, err = gh.Issues.DeleteComment(c, "octo", "catalog", cm.GetID())
	must(err)
	if len(s.Comments(repo, n)) != 0 {
		t.Error("comment not deleted")
	}

	_, _, err = gh.Issues.AddLabelsToIssue(c, "octo", "catalog", n, []string{"b"})
	must(err)
	_, err = gh.Issues.RemoveLabelForIssue(c, "octo", "catalog", n, "a")
	must(err)
	labels, _, err := gh.Issues.ListLabelsByIssue(c, "octo", "catalog", n, nil)
	must(err)
	if len(labels) != 1 || labels[0].GetName() != "b" {
		t.Errorf("labels %+v", labels)
	}

	_, _, err = gh.Repositories.CreateStatus(c, "octo", "catalog", head, github.RepoStatus{State: new("failure"), TargetURL: new("https://ci.example/1"), Description: new("1 error")})
	must(err)
	sts, _, err := gh.Repositories.ListStatuses(c, "octo", "catalog", "pr-1", nil)
	must(err)
	if len(sts) != 1 || sts[0].GetContext() != "default" || sts[0].GetCreator().GetLogin() != "release-bot[bot]" {
		t.Errorf("statuses %+v", sts)
	}
	combined, _, err := gh.Repositories.GetCombinedStatus(c, "octo", "catalog", head, nil)
	must(err)
	if combined.GetState() != "failure" {
		t.Errorf("combined state %s", combined.GetState())
	}

	ref, _, err := gh.Git.GetRef(c, "octo", "catalog", "tags/v1")
	must(err)
	if ref.GetRef() != "refs/tags/v1" || ref.GetObject().GetSHA() != fakeSHA("v1") {
		t.Errorf("ref %+v", ref)
	}
	_, _, err = gh.Repositories.GetPermissionLevel(c, "octo", "catalog", "alice")
	must(err)
	s.AddTeamMember("octo", "ops", "alice", "member")
	_, _, err = gh.Teams.GetTeamMembershipBySlug(c, "octo", "ops", "alice")
	must(err)
	tok, _, err := gh.Apps.CreateInstallationToken(c, 9, &github.InstallationTokenOptions{Repositories: []string{"catalog"}, Permissions: &github.InstallationPermissions{Checks: new("write")}})
	must(err)
	if tok.GetPermissions().GetChecks() != "write" {
		t.Errorf("token %+v", tok)
	}

	merged, _, err := gh.PullRequests.IsMerged(c, "octo", "catalog", n)
	must(err)
	if merged {
		t.Error("merged before merging")
	}
	_, _, err = gh.PullRequests.Merge(c, "octo", "catalog", n, "body", &github.PullRequestOptions{CommitTitle: "Add foo (#1)", MergeMethod: "rebase"})
	must(err)
	merged, _, err = gh.PullRequests.IsMerged(c, "octo", "catalog", n)
	must(err)
	if after := s.PullRequest(repo, n); !merged || after.MergeMethod != "rebase" || after.CommitTitle != "Add foo (#1)" || after.CommitMessage != "body" {
		t.Errorf("after merge %v %+v", merged, after)
	}

	// Opening a pull request: of a branch the fake's git service resolves, authored by the actor; a second
	// one of the same branch into the same base is refused as GitHub refuses it.
	s.ServeBranches(Branches{Resolve: func(repo, branch string) string {
		if branch == "release/foo" {
			return fakeSHA("release")
		}
		return ""
	}})
	opened, _, err := gh.PullRequests.Create(c, "octo", "catalog", github.CreatePullRequest{Title: new("Add foo 1.0.0 to FBC"), Head: "release/foo", Base: "main"})
	must(err)
	if opened.GetUser().GetLogin() != "release-bot[bot]" || opened.GetHead().GetSHA() != fakeSHA("release") || opened.GetState() != "open" {
		t.Errorf("opened %+v", opened)
	}
	if _, resp, err := gh.PullRequests.Create(c, "octo", "catalog", github.CreatePullRequest{Title: new("again"), Head: "release/foo", Base: "main"}); err == nil || resp.StatusCode != 422 {
		t.Errorf("a second pull request of the branch: %v", err)
	}
	if _, resp, err := gh.PullRequests.Create(c, "octo", "catalog", github.CreatePullRequest{Title: new("none"), Head: "no-such-branch", Base: "main"}); err == nil || resp.StatusCode != 422 {
		t.Errorf("a pull request of a missing branch: %v", err)
	}

	hit := map[string]bool{}
	for _, r := range s.Requests() {
		rt, err := s.spec.findRoute(r.Method, r.Path)
		must(err)
		hit[r.Method+" "+rt.template] = true
	}
	for key := range routes {
		if !hit[key] {
			t.Errorf("route %s is not exercised by this test", key)
		}
	}
}
