package checksapi

import (
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

const repoName = "octo/catalog"

var repo = ghclient.Repo{Owner: "octo", Name: "catalog"}

// checksOf is the Checks API of a token client of s.
func checksOf(t *testing.T, s *githubtest.Server) API {
	t.Helper()
	cs, err := ghclient.New(ghclient.Config{APIURL: s.URL, Token: "ghp_secret", Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	gh, err := cs.For(0)
	if err != nil {
		t.Fatal(err)
	}
	api, err := Of(gh)
	if err != nil {
		t.Fatal(err)
	}
	return api
}

func TestCheckRunCallsAgainstTheFake(t *testing.T) {
	s := githubtest.New(t)
	ctx := t.Context()
	n := s.AddPullRequest(repoName, githubtest.PullRequest{User: "alice"})
	head := s.PullRequest(repoName, n).HeadSHA
	api := checksOf(t, s)
	id, err := api.CreateCheckRun(ctx, repo, CheckRun{Name: "catalogbot", HeadSHA: head, Status: "in_progress", ExternalID: "job-1",
		DetailsURL: "https://bot.example/runs/1", Title: "running", Summary: "owners..."})
	if err != nil {
		t.Fatal(err)
	}
	if err := api.UpdateCheckRun(ctx, repo, id, CheckRun{Name: "catalogbot", Conclusion: "failure", Title: "1 error", Summary: "bad",
		Annotations: []Annotation{{Path: "catalog/a/catalog.json", StartLine: 3, Level: "failure", Message: "m", Title: "rule"}}}); err != nil {
		t.Fatal(err)
	}
	if found, err := api.FindCheckRun(ctx, repo, head, "catalogbot", "job-1"); err != nil || found != id {
		t.Errorf("FindCheckRun = %d, %v; want %d", found, err, id)
	}
	if found, err := api.FindCheckRun(ctx, repo, head, "catalogbot", "job-2"); err != nil || found != 0 {
		t.Errorf("FindCheckRun of another job = %d, %v", found, err)
	}
	runs := s.CheckRuns(repoName)
	if len(runs) != 1 || runs[0].Conclusion != "failure" || len(runs[0].Output.Annotations) != 1 || runs[0].Output.Annotations[0].EndLine != 3 {
		t.Errorf("check runs = %+v", runs)
	}
}

// A create is not sent again blindly: after a 502, the check run is looked up by its external ID, and
// created again (its body intact: the fake validates the body of every attempt) only when missing.
func TestCreateIsFoundAgainByExternalID(t *testing.T) {
	s := githubtest.New(t)
	s.AddRepo(repoName)
	api := checksOf(t, s)
	ctx := t.Context()
	s.FailNext("POST", "/repos/octo/catalog/check-runs", 502, 1)
	sha := strings.Repeat("a", 40)
	if _, err := api.CreateCheckRun(ctx, repo, CheckRun{Name: "c", HeadSHA: sha, Status: "in_progress", ExternalID: "run-1"}); err != nil {
		t.Errorf("check run after a 502: %v", err)
	}
	s.InjectFault("POST", "/repos/octo/catalog/check-runs", 1, githubtest.Fault{Applied: true, Status: 502})
	if _, err := api.CreateCheckRun(ctx, repo, CheckRun{Name: "c", HeadSHA: sha, Status: "in_progress", ExternalID: "run-2"}); err != nil {
		t.Errorf("check run applied, then 502: %v", err)
	}
	if n := len(s.CheckRuns(repoName)); n != 2 {
		t.Errorf("%d check runs, want 2", n)
	}
	// Without an external ID nothing identifies it: the error is the caller's.
	s.FailNext("POST", "/repos/octo/catalog/check-runs", 502, 1)
	if _, err := api.CreateCheckRun(ctx, repo, CheckRun{Name: "c", HeadSHA: sha, Status: "in_progress"}); ghclient.StatusOf(err) != 502 {
		t.Errorf("check run without external ID after a 502: %v", err)
	}
	posts, failed := 0, 0
	for _, r := range s.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/check-runs") {
			posts++
			if r.Status == 502 {
				failed++
			}
		}
	}
	if posts != 4 || failed != 3 {
		t.Errorf("%d creates sent, %d answered 502; want 4 (run-1 twice, run-2 once, one without an external ID), 3", posts, failed)
	}
}

// Only a client ghclient made reaches the Checks API: a GitHub of another making (a fake) gets none.
func TestOfRefusesAnotherGitHub(t *testing.T) {
	type other struct{ ghclient.GitHub }
	if api, err := Of(other{}); err == nil || api != nil {
		t.Errorf("Of(a fake) = %v, %v", api, err)
	}
}
