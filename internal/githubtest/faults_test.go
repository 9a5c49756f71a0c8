package githubtest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
)

// retry is the kind of loop the bot runs: retry 5xx and rate limits, waiting what GitHub asks.
func retry[T any](ctx context.Context, attempts int, f func() (T, *github.Response, error)) (T, int, error) {
	var zero T
	for i := 1; ; i++ {
		v, resp, err := f()
		if err == nil {
			return v, i, nil
		}
		var wait time.Duration
		var rle *github.RateLimitError
		var abuse *github.AbuseRateLimitError
		switch {
		case errors.As(err, &rle):
			wait = time.Until(rle.Rate.Reset.Time)
		case errors.As(err, &abuse):
			wait = abuse.GetRetryAfter()
		case resp != nil && resp.StatusCode >= 500:
		default:
			return zero, i, err
		}
		if i == attempts {
			return zero, i, err
		}
		select {
		case <-time.After(max(wait, 0)):
		case <-ctx.Done():
			return zero, i, ctx.Err()
		}
	}
}

func TestFailNext500ThenSuccess(t *testing.T) {
	s := New(t)
	gh := newClient(t, s)
	n := s.AddPullRequest(repo, PullRequest{})
	s.FailNext("GET", "/repos/octo/catalog/pulls/", http.StatusInternalServerError, 2)
	s.FailNext("POST", "/repos/octo/catalog/issues/", http.StatusBadGateway, 1)

	pr, attempts, err := retry(ctx(t), 5, func() (*github.PullRequest, *github.Response, error) {
		return gh.PullRequests.Get(ctx(t), "octo", "catalog", n)
	})
	if err != nil || attempts != 3 || pr.GetNumber() != n {
		t.Fatalf("after %d attempts: %v %+v", attempts, err, pr)
	}
	// The other fault is scoped to its method and prefix: untouched so far.
	_, attempts, err = retry(ctx(t), 5, func() (*github.IssueComment, *github.Response, error) {
		return gh.Issues.CreateComment(ctx(t), "octo", "catalog", n, github.IssueCommentRequest{Body: "hi"})
	})
	if err != nil || attempts != 2 {
		t.Fatalf("comment after %d attempts: %v", attempts, err)
	}
	var statuses []int
	for _, r := range s.Requests() {
		statuses = append(statuses, r.Status)
	}
	if want := []int{500, 500, 200, 502, 201}; !equalInts(statuses, want) {
		t.Errorf("answered %v, want %v", statuses, want)
	}
	if len(s.Comments(repo, n)) != 1 {
		t.Error("the failed POST was applied")
	}
}

func TestFailNextRateLimits(t *testing.T) {
	t.Parallel() // waits out two one-second Retry-Afters
	s := New(t)
	gh := newClient(t, s)
	s.AddRepo(repo)

	s.FailNext("", "/repos/", http.StatusTooManyRequests, 1)
	_, _, err := gh.Repositories.Get(ctx(t), "octo", "catalog")
	var rle *github.RateLimitError
	if !errors.As(err, &rle) || rle.Rate.Remaining != 0 || rle.Rate.Reset.IsZero() {
		t.Fatalf("429: %v, want a *github.RateLimitError with remaining 0", err)
	}

	s.FailNext("", "/repos/", http.StatusForbidden, 1)
	start := time.Now()
	_, attempts, err := retry(ctx(t), 3, func() (*github.Repository, *github.Response, error) {
		return gh.Repositories.Get(ctx(t), "octo", "catalog")
	})
	if err != nil || attempts < 2 {
		t.Fatalf("secondary rate limit then success: %v after %d attempts", err, attempts)
	}
	if time.Since(start) < 900*time.Millisecond {
		t.Errorf("retried after %v, before Retry-After", time.Since(start))
	}
	var abuse *github.AbuseRateLimitError
	s.FailNext("", "/repos/", http.StatusForbidden, 1)
	time.Sleep(time.Second) // let go-github's remembered secondary limit pass
	if _, _, err := gh.Repositories.Get(ctx(t), "octo", "catalog"); !errors.As(err, &abuse) || abuse.GetRetryAfter() != time.Second {
		t.Fatalf("403: %v, want a *github.AbuseRateLimitError with Retry-After 1s", err)
	}
}

func TestInvalidRequestDoesNotConsumeFault(t *testing.T) {
	tb := &capturingTB{TB: t}
	s := New(tb)
	s.AddRepo(repo)
	s.InjectFault("GET", "/repos/", 1, Fault{Status: http.StatusServiceUnavailable, Body: `{"message":"down"}`})
	if status, _ := raw(t, "GET", s.URL+"/repos/octo/catalog?bogus=1", ""); status != http.StatusBadRequest {
		t.Fatalf("invalid request answered %d, want 400", status)
	}
	tb.wantCaptured(t, "bogus")
	if status, body := raw(t, "GET", s.URL+"/repos/octo/catalog", ""); status != http.StatusServiceUnavailable || body != `{"message":"down"}` {
		t.Fatalf("fault answered %d %s", status, body)
	}
	if status, _ := raw(t, "GET", s.URL+"/repos/octo/catalog", ""); status != http.StatusOK {
		t.Fatalf("after the fault: %d", status)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
