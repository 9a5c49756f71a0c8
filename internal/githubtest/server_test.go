package githubtest

import (
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-github/v92/github"
)

const repo = "octo/catalog"

func TestCheckRunLifecycle(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	n := s.AddPullRequest(repo, PullRequest{User: "alice"})
	head := s.PullRequest(repo, n).HeadSHA

	cr, resp, err := gh.Checks.CreateCheckRun(ctx(t), "octo", "catalog", github.CreateCheckRunOptions{
		Name: "catalogbot/validate", HeadSHA: head, Status: new("in_progress"),
		Output: &github.CheckRunOutput{Title: new("Validating"), Summary: new("running")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusCreated || cr.GetStatus() != "in_progress" || cr.GetHeadSHA() != head {
		t.Fatalf("created %d %+v", resp.StatusCode, cr)
	}
	if len(cr.PullRequests) != 1 || cr.PullRequests[0].GetNumber() != n {
		t.Errorf("check run pull requests = %+v, want #%d", cr.PullRequests, n)
	}

	ann := []*github.CheckRunAnnotation{{
		Path: new("catalog/foo/catalog.yaml"), StartLine: new(3), EndLine: new(3),
		AnnotationLevel: new("failure"), Message: new("channel has no head"),
	}}
	for range 2 { // annotations accumulate over updates
		_, _, err = gh.Checks.UpdateCheckRun(ctx(t), "octo", "catalog", cr.GetID(), github.UpdateCheckRunOptions{
			Name: "catalogbot/validate", Conclusion: new("failure"),
			Output: &github.CheckRunOutput{Title: new("1 error"), Summary: new("see annotations"), Annotations: ann},
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	list, _, err := gh.Checks.ListCheckRunsForRef(ctx(t), "octo", "catalog", head, &github.ListCheckRunsOptions{CheckName: new("catalogbot/validate")})
	if err != nil {
		t.Fatal(err)
	}
	if list.GetTotal() != 1 || list.CheckRuns[0].GetConclusion() != "failure" || list.CheckRuns[0].GetStatus() != "completed" ||
		list.CheckRuns[0].GetOutput().GetAnnotationsCount() != 2 {
		t.Fatalf("listed %+v", list)
	}
	// By branch name too.
	list, _, err = gh.Checks.ListCheckRunsForRef(ctx(t), "octo", "catalog", "pr-1", nil)
	if err != nil || list.GetTotal() != 1 {
		t.Fatalf("listing by branch: %v %+v", err, list)
	}

	runs := s.CheckRuns(repo)
	if len(runs) != 1 || runs[0].Updates != 2 || len(runs[0].Output.Annotations) != 2 || runs[0].Output.Title != "1 error" || runs[0].CompletedAt.IsZero() {
		t.Errorf("fake state %+v", runs)
	}
}

func TestCheckRunCompletedWithoutConclusionIs422(t *testing.T) {
	s := New(t)
	s.AddRepo(repo)
	_, resp, err := newClient(t, s).Checks.CreateCheckRun(ctx(t), "octo", "catalog", github.CreateCheckRunOptions{
		Name: "x", HeadSHA: fakeSHA("x"), Status: new("completed"),
	})
	if err == nil || resp.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("got %v, want 422", err)
	}
	if len(s.CheckRuns(repo)) != 0 {
		t.Error("a rejected check run was stored")
	}
}

func TestCommentsAndReactions(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	n := s.AddPullRequest(repo, PullRequest{})
	human := s.AddComment(repo, n, "alice", "/merge")

	c, _, err := gh.Issues.CreateComment(ctx(t), "octo", "catalog", n, github.IssueCommentRequest{Body: "validating…"})
	if err != nil {
		t.Fatal(err)
	}
	if c.GetUser().GetLogin() != "catalogbot[bot]" || c.GetUser().GetType() != "Bot" {
		t.Errorf("comment author %+v", c.GetUser())
	}
	if _, _, err := gh.Issues.UpdateComment(ctx(t), "octo", "catalog", c.GetID(), github.IssueCommentRequest{Body: "all good"}); err != nil {
		t.Fatal(err)
	}
	r1, resp1, err := gh.Reactions.CreateIssueCommentReaction(ctx(t), "octo", "catalog", human, "+1")
	if err != nil || resp1.StatusCode != http.StatusCreated {
		t.Fatalf("reaction: %v", err)
	}
	r2, resp2, err := gh.Reactions.CreateIssueCommentReaction(ctx(t), "octo", "catalog", human, "+1")
	if err != nil || resp2.StatusCode != http.StatusOK || r2.GetID() != r1.GetID() {
		t.Fatalf("repeated reaction: %v %d %d/%d", err, resp2.StatusCode, r2.GetID(), r1.GetID())
	}

	list, _, err := gh.Issues.ListComments(ctx(t), "octo", "catalog", n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].GetBody() != "/merge" || list[1].GetBody() != "all good" || list[0].GetReactions().GetPlusOne() != 1 {
		t.Fatalf("listed %+v", list)
	}
	got := s.Comments(repo, n)
	if len(got) != 2 || got[1].Edits != 1 || len(got[0].Reactions) != 1 || got[0].Reactions[0].User != "catalogbot[bot]" {
		t.Errorf("fake state %+v", got)
	}
	if _, _, err := gh.Issues.CreateComment(ctx(t), "octo", "catalog", 99, github.IssueCommentRequest{Body: "x"}); !isStatus(err, 404) {
		t.Errorf("comment on a missing pull request: %v, want 404", err)
	}
}

func TestMergeHonoursSHAGuard(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	n := s.AddPullRequest(repo, PullRequest{})
	head := s.PullRequest(repo, n).HeadSHA

	_, resp, err := gh.PullRequests.Merge(ctx(t), "octo", "catalog", n, "", &github.PullRequestOptions{SHA: fakeSHA("stale"), MergeMethod: "squash"})
	if err == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("merge with a stale sha: %v, want 409", err)
	}
	if merged, _ := s.Merged(repo, n); merged {
		t.Fatal("merged despite the sha guard")
	}
	res, _, err := gh.PullRequests.Merge(ctx(t), "octo", "catalog", n, "", &github.PullRequestOptions{SHA: head, MergeMethod: "squash"})
	if err != nil {
		t.Fatal(err)
	}
	merged, sha := s.Merged(repo, n)
	if !merged || sha != head || !res.GetMerged() {
		t.Fatalf("Merged = %v %s, result %+v", merged, sha, res)
	}
	pr, _, err := gh.PullRequests.Get(ctx(t), "octo", "catalog", n)
	if err != nil || !pr.GetMerged() || pr.GetState() != "closed" || pr.GetMergeCommitSHA() != res.GetSHA() {
		t.Fatalf("after merge: %v %+v", err, pr)
	}
	ref, _, err := gh.Git.GetRef(ctx(t), "octo", "catalog", "heads/main")
	if err != nil || ref.GetObject().GetSHA() != res.GetSHA() {
		t.Fatalf("main after merge: %v %+v", err, ref)
	}
	if _, resp, err := gh.PullRequests.Merge(ctx(t), "octo", "catalog", n, "", nil); err == nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("merging twice: %v, want 405", err)
	}
}

func TestMergeNotMergeableIs405(t *testing.T) {
	s := New(t)
	n := s.AddPullRequest(repo, PullRequest{Mergeable: new(false)})
	_, resp, err := newClient(t, s).PullRequests.Merge(ctx(t), "octo", "catalog", n, "", nil)
	if err == nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("got %v, want 405", err)
	}
}

func TestPullRequestsReviewsLabelsFiles(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	n := s.AddPullRequest(repo, PullRequest{User: "alice", HeadRef: "add-foo", Labels: []string{"needs-review"},
		Files: []File{{Name: "catalog/foo/catalog.yaml", Status: "added"}}})
	s.AddPullRequest(repo, PullRequest{State: "closed"})
	s.AddReview(repo, n, Review{User: "bob", State: "APPROVED"})

	open, _, err := gh.PullRequests.List(ctx(t), "octo", "catalog", nil)
	if err != nil || len(open) != 1 || open[0].GetNumber() != n || open[0].GetHead().GetRef() != "add-foo" || open[0].GetUser().GetLogin() != "alice" {
		t.Fatalf("open pull requests: %v %+v", err, open)
	}
	byHead, _, err := gh.PullRequests.List(ctx(t), "octo", "catalog", &github.PullRequestListOptions{State: "all", Head: "octo:add-foo"})
	if err != nil || len(byHead) != 1 {
		t.Fatalf("by head: %v %d", err, len(byHead))
	}
	reviews, _, err := gh.PullRequests.ListReviews(ctx(t), "octo", "catalog", n, nil)
	if err != nil || len(reviews) != 1 || reviews[0].GetState() != "APPROVED" || reviews[0].GetCommitID() != s.PullRequest(repo, n).HeadSHA {
		t.Fatalf("reviews: %v %+v", err, reviews)
	}
	files, _, err := gh.PullRequests.ListFiles(ctx(t), "octo", "catalog", n, nil)
	if err != nil || len(files) != 1 || files[0].GetStatus() != "added" {
		t.Fatalf("files: %v %+v", err, files)
	}
	if _, _, err := gh.Issues.AddLabelsToIssue(ctx(t), "octo", "catalog", n, []string{"validated"}); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Issues.RemoveLabelForIssue(ctx(t), "octo", "catalog", n, "needs-review"); err != nil {
		t.Fatal(err)
	}
	if got := s.PullRequest(repo, n).Labels; !slices.Equal(got, []string{"validated"}) {
		t.Errorf("labels %q", got)
	}
}

func TestStatusesPermissionsTeamsTokens(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	s.AddRepo(repo)
	sha := fakeSHA("commit")
	for _, st := range []string{"pending", "success"} {
		if _, _, err := gh.Repositories.CreateStatus(ctx(t), "octo", "catalog", sha, github.RepoStatus{State: new(st), Context: new("catalogbot")}); err != nil {
			t.Fatal(err)
		}
	}
	combined, _, err := gh.Repositories.GetCombinedStatus(ctx(t), "octo", "catalog", sha, nil)
	if err != nil || combined.GetState() != "success" || combined.GetTotalCount() != 1 {
		t.Fatalf("combined: %v %+v", err, combined)
	}
	if got := s.Statuses(repo, sha); len(got) != 2 || got[1].State != "success" {
		t.Errorf("statuses %+v", got)
	}

	s.SetPermission(repo, "alice", "maintain")
	perm, _, err := gh.Repositories.GetPermissionLevel(ctx(t), "octo", "catalog", "alice")
	if err != nil || perm.GetPermission() != "write" || perm.GetRoleName() != "maintain" {
		t.Fatalf("permission: %v %+v", err, perm)
	}
	perm, _, err = gh.Repositories.GetPermissionLevel(ctx(t), "octo", "catalog", "mallory")
	if err != nil || perm.GetPermission() != "none" {
		t.Fatalf("stranger's permission: %v %+v", err, perm)
	}

	s.AddTeamMember("octo", "reviewers", "bob", "maintainer")
	m, _, err := gh.Teams.GetTeamMembershipBySlug(ctx(t), "octo", "reviewers", "bob")
	if err != nil || m.GetRole() != "maintainer" || m.GetState() != "active" {
		t.Fatalf("membership: %v %+v", err, m)
	}
	if _, _, err := gh.Teams.GetTeamMembershipBySlug(ctx(t), "octo", "reviewers", "mallory"); !isStatus(err, 404) {
		t.Fatalf("non-member: %v, want 404", err)
	}

	tok, resp, err := gh.Apps.CreateInstallationToken(ctx(t), 42, nil)
	if err != nil || resp.StatusCode != http.StatusCreated || tok.GetToken() == "" || tok.GetExpiresAt().IsZero() {
		t.Fatalf("token: %v %+v", err, tok)
	}
	if _, _, err := gh.Git.GetRef(ctx(t), "octo", "catalog", "heads/nope"); !isStatus(err, 404) {
		t.Fatalf("missing ref: %v, want 404", err)
	}
}

func TestPagination(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	n := s.AddPullRequest(repo, PullRequest{})
	for i := range 5 {
		s.AddComment(repo, n, "alice", string(rune('a'+i)))
	}
	var bodies []string
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 2}}
	for pages := 0; ; pages++ {
		page, resp, err := gh.Issues.ListComments(ctx(t), "octo", "catalog", n, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			bodies = append(bodies, c.GetBody())
		}
		if resp.NextPage == 0 {
			if pages != 2 {
				t.Errorf("read %d pages, want 3", pages+1)
			}
			break
		}
		opts.Page = resp.NextPage
	}
	if !slices.Equal(bodies, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("paged bodies %q", bodies)
	}
}

func TestRecordsRequests(t *testing.T) {
	s := New(t)
	s.AddRepo(repo)
	if _, _, err := newClient(t, s).Repositories.Get(ctx(t), "octo", "catalog"); err != nil {
		t.Fatal(err)
	}
	got := s.Requests()
	want := []Recorded{{Method: "GET", Path: "/repos/octo/catalog", Status: 200}}
	if !slices.Equal(got, want) {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

func isStatus(err error, status int) bool {
	var er *github.ErrorResponse
	return errors.As(err, &er) && er.Response.StatusCode == status
}
