package ghclient

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

const repoName = "octo/catalog"

var repo = Repo{"octo", "catalog"}

type countingObserver struct {
	mu        sync.Mutex
	calls     map[string]int
	remaining map[string]int
}

func (o *countingObserver) APICall(method string, status int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls[fmt.Sprint(method, " ", status)]++
}

func (o *countingObserver) RateLimit(resource string, remaining int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.remaining[resource] = remaining
}

func newObserver() *countingObserver {
	return &countingObserver{calls: map[string]int{}, remaining: map[string]int{}}
}

func tokenClient(t *testing.T, s *githubtest.Server, obs Observer) GitHub {
	t.Helper()
	cs, err := New(Config{APIURL: s.URL, Token: "ghp_secret", Observer: obs, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	gh, err := cs.For(0)
	if err != nil {
		t.Fatal(err)
	}
	return gh
}

func TestConfigNeedsExactlyOneAuthMode(t *testing.T) {
	for name, cfg := range map[string]Config{
		"neither": {},
		"both":    {Token: "t", AppID: 1, PrivateKey: []byte("k")},
		"no key":  {AppID: 1},
		"bad key": {AppID: 1, PrivateKey: []byte("not a key")},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestAppModeUsesOneTokenPerInstallation(t *testing.T) {
	s := githubtest.New(t)
	s.AddRepo(repoName)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	cs, err := New(Config{APIURL: s.URL, AppID: 7, PrivateKey: pemKey})
	if err != nil {
		t.Fatal(err)
	}
	if !cs.AppMode() {
		t.Fatal("not in app mode")
	}
	if _, err := cs.For(0); err == nil {
		t.Error("a client without an installation was handed out")
	}
	gh, err := cs.For(42)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := cs.For(42)
	if again != gh {
		t.Error("a second client was built for the same installation")
	}
	for range 2 {
		if _, err := gh.BranchSHA(t.Context(), repo, "main"); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := gh.GitToken(t.Context())
	if err != nil || !strings.HasPrefix(tok, "ghs_fake42_") {
		t.Errorf("git token %q, %v", tok, err)
	}
	var tokens int
	for _, r := range s.Requests() {
		if strings.HasSuffix(r.Path, "/access_tokens") {
			tokens++
		}
	}
	if tokens != 1 {
		t.Errorf("%d installation tokens requested, want 1 (cached)", tokens)
	}
}

func TestCallsAgainstTheFake(t *testing.T) {
	s := githubtest.New(t)
	ctx := t.Context()
	n := s.AddPullRequest(repoName, githubtest.PullRequest{User: "alice", Labels: []string{"lgtm"}})
	s.AddReview(repoName, n, githubtest.Review{User: "bob", State: "APPROVED"})
	s.SetPermission(repoName, "bob", "maintain")
	s.AddTeamMember("octo", "admins", "carol", "member")
	obs := newObserver()
	gh := tokenClient(t, s, obs)

	pr, err := gh.PullRequest(ctx, repo, n)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Author != "alice" || pr.State != "open" || !pr.HasLabel("LGTM") || pr.HeadSHA == "" || pr.BaseRef != "main" {
		t.Errorf("pull request = %+v", pr)
	}
	if nums, err := gh.PullRequestsForCommit(ctx, repo, pr.HeadSHA); err != nil || fmt.Sprint(nums) != fmt.Sprint([]int{n}) {
		t.Errorf("pull requests for the head = %v, %v", nums, err)
	}
	if rs, err := gh.Reviews(ctx, repo, n); err != nil || len(rs) != 1 || rs[0].User != "bob" || rs[0].State != "APPROVED" {
		t.Errorf("reviews = %+v, %v", rs, err)
	}
	cid, err := gh.CreateComment(ctx, repo, n, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if err := gh.EditComment(ctx, repo, cid, "hello again"); err != nil {
		t.Fatal(err)
	}
	if err := gh.React(ctx, repo, cid, "+1"); err != nil {
		t.Fatal(err)
	}
	if cs, err := gh.Comments(ctx, repo, n); err != nil || len(cs) != 1 || cs[0].Body != "hello again" || cs[0].ID != cid {
		t.Errorf("comments = %+v, %v", cs, err)
	}
	if err := gh.AddLabel(ctx, repo, n, "do-not-merge/hold"); err != nil {
		t.Fatal(err)
	}
	if err := gh.RemoveLabel(ctx, repo, n, "do-not-merge/hold"); err != nil {
		t.Fatal(err)
	}
	if err := gh.RemoveLabel(ctx, repo, n, "never-there"); err != nil {
		t.Errorf("removing an absent label: %v", err)
	}
	if p, err := gh.Permission(ctx, repo, "bob"); err != nil || p != "maintain" {
		t.Errorf("permission of bob = %q, %v", p, err)
	}
	if p, err := gh.Permission(ctx, repo, "nobody"); err != nil || p != "none" {
		t.Errorf("permission of nobody = %q, %v", p, err)
	}
	if ok, err := gh.IsTeamMember(ctx, "octo", "admins", "carol"); err != nil || !ok {
		t.Errorf("carol in octo/admins = %v, %v", ok, err)
	}
	if ok, err := gh.IsTeamMember(ctx, "octo", "admins", "mallory"); err != nil || ok {
		t.Errorf("mallory in octo/admins = %v, %v", ok, err)
	}
	if err := gh.CreateStatus(ctx, repo, pr.HeadSHA, Status{State: "success", Context: "catalogbot/publish", Description: "sha256:x"}); err != nil {
		t.Fatal(err)
	}

	// The SHA guard: a stale SHA is refused with 409, the tested head merges, a second merge gets 405.
	_, err = gh.Merge(ctx, repo, n, strings.Repeat("0", 40), "squash", "t")
	var me *MergeError
	if !errors.As(err, &me) || me.Status != http.StatusConflict || me.Reason() != "head moved" {
		t.Fatalf("merge with a stale SHA: %v", err)
	}
	sha, err := gh.Merge(ctx, repo, n, pr.HeadSHA, "squash", "t")
	if err != nil || sha == "" {
		t.Fatalf("merge = %q, %v", sha, err)
	}
	_, err = gh.Merge(ctx, repo, n, pr.HeadSHA, "squash", "t")
	if !errors.As(err, &me) || me.Status != http.StatusMethodNotAllowed || StatusOf(err) != 405 {
		t.Fatalf("second merge: %v", err)
	}
	if main, err := gh.BranchSHA(ctx, repo, "main"); err != nil || main != sha {
		t.Errorf("main = %q, %v; want the merge commit %s", main, err, sha)
	}
	if _, err := gh.PullRequest(ctx, repo, 999); StatusOf(err) != http.StatusNotFound {
		t.Errorf("missing pull request: status %d (%v)", StatusOf(err), err)
	}
	if obs.calls["POST 201"] == 0 || obs.remaining["core"] != 4999 {
		t.Errorf("observer saw %v, remaining %v", obs.calls, obs.remaining)
	}
}

func TestTransientFailuresAreRetried(t *testing.T) {
	s := githubtest.New(t)
	s.AddRepo(repoName)
	obs := newObserver()
	gh := tokenClient(t, s, obs)
	ctx := t.Context()
	for _, status := range []int{500, 502, 503} {
		s.FailNext("", "/repos/octo/catalog/git/ref", status, 2)
		if _, err := gh.BranchSHA(ctx, repo, "main"); err != nil {
			t.Errorf("after two %d answers: %v", status, err)
		}
	}
	// A create is not sent again blindly: after a 502, the comment is looked up by its body, and created
	// again only when missing (the check runs' creates: bot/checkrun/internal/checksapi).
	n := s.AddPullRequest(repoName, githubtest.PullRequest{User: "alice"})
	comments := fmt.Sprintf("/repos/octo/catalog/issues/%d/comments", n)
	s.FailNext("POST", comments, 502, 1)
	if _, err := gh.CreateComment(ctx, repo, n, "one"); err != nil {
		t.Errorf("comment after a 502: %v", err)
	}
	s.InjectFault("POST", comments, 1, githubtest.Fault{Applied: true, Status: 502})
	if _, err := gh.CreateComment(ctx, repo, n, "two"); err != nil {
		t.Errorf("comment applied, then 502: %v", err)
	}
	if cs := s.Comments(repoName, n); len(cs) != 2 || cs[0].Body != "one" || cs[1].Body != "two" {
		t.Errorf("comments %+v, want one and two", cs)
	}
	s.FailNext("", "/repos/octo/catalog/git/ref", 500, 4)
	if _, err := gh.BranchSHA(ctx, repo, "main"); StatusOf(err) != 500 {
		t.Errorf("after four 500 answers (3 retries): status %d, %v", StatusOf(err), err)
	}
	if obs.calls["GET 500"] != 2+4 || obs.calls["POST 502"] != 2 {
		t.Errorf("observed %v", obs.calls)
	}
}

func TestRateLimitsWaitThenSucceed(t *testing.T) {
	s := githubtest.New(t)
	s.AddRepo(repoName)
	gh := tokenClient(t, s, nopObserver{})
	ctx := t.Context()
	for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden} {
		s.FailNext("", "/repos/octo/catalog/git/ref", status, 1)
		start := time.Now()
		if _, err := gh.BranchSHA(ctx, repo, "main"); err != nil {
			t.Fatalf("after a %d rate limit: %v", status, err)
		}
		if d := time.Since(start); d < 500*time.Millisecond || d > 5*time.Second {
			t.Errorf("a %d rate limit with Retry-After 1 took %s", status, d)
		}
	}
	// Waiting for a reset gives up when the request's context ends: the limit resets in a minute, the
	// context ends after 100 ms, and the call returns long before the reset (a wide margin for a loaded
	// machine).
	f := githubtest.DefaultFault(http.StatusTooManyRequests)
	f.Header.Set("Retry-After", "60")
	f.Header.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
	s.InjectFault("", "/repos/octo/catalog/git/ref", 1, f)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := gh.BranchSHA(short, repo, "main"); err == nil || time.Since(start) > 20*time.Second {
		t.Errorf("cancelled wait returned %v after %s", err, time.Since(start))
	}
}

func TestResetWait(t *testing.T) {
	now := time.Unix(1000, 0)
	h := http.Header{}
	h.Set("X-RateLimit-Reset", "1003")
	if got := resetWait(&http.Response{Header: h}, now); got != 3100*time.Millisecond {
		t.Errorf("wait = %s", got)
	}
	h.Set("Retry-After", "10")
	if got := resetWait(&http.Response{Header: h}, now); got != 10100*time.Millisecond {
		t.Errorf("wait with Retry-After = %s", got)
	}
}
