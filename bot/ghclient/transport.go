package ghclient

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Observer receives one call per HTTP exchange with GitHub (status 0 for a transport error) and the rate
// limit GitHub reported.
type Observer interface {
	APICall(method string, status int)
	RateLimit(resource string, remaining int)
}

// retryTransport retries 5xx answers and transport errors with backoff (only of replayable requests), waits for a primary rate limit
// to reset (bounded by maxWait, interrupted by the request's context), and reports every exchange. It
// re-creates the request body from GetBody on every attempt, so the layers above may retry too.
type retryTransport struct {
	next     http.RoundTripper
	observe  Observer
	retries  int           // 5xx and transport-error retries per request
	backoff  time.Duration // first retry delay, doubled each time
	maxWait  time.Duration // longest primary rate-limit wait
	maxLimit int           // rate-limit waits per request
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	retries, waits := 0, 0
	delay := t.backoff
	for {
		r := req
		if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r = req.Clone(ctx)
			r.Body = body
		}
		resp, err := t.next.RoundTrip(r)
		if err != nil {
			t.observe.APICall(req.Method, 0)
			if ctx.Err() != nil || retries >= t.retries || !replayable(req) {
				return nil, err
			}
			retries++
			if err := sleep(ctx, delay); err != nil {
				return nil, err
			}
			delay *= 2
			continue
		}
		t.observe.APICall(req.Method, resp.StatusCode)
		if rem, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining")); err == nil {
			res := resp.Header.Get("X-RateLimit-Resource")
			if res == "" {
				res = "core"
			}
			t.observe.RateLimit(res, rem)
		}
		switch {
		case resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented && retries < t.retries && replayable(req):
			retries++
			discard(resp)
			if err := sleep(ctx, delay); err != nil {
				return nil, err
			}
			delay *= 2
			continue
		case primaryLimited(resp) && waits < t.maxLimit:
			wait := resetWait(resp, time.Now())
			if wait > t.maxWait {
				return resp, nil // go-github reports *github.RateLimitError; the job is retried later
			}
			waits++
			discard(resp)
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		return resp, nil
	}
}

// replayable reports whether a request may be sent again after an answer that does not say whether GitHub
// applied it (a 5xx, a dropped connection). A POST creates something: sent twice, it may create it twice
// (two check runs, two comments). It is never repeated here; the client looks up what it created instead
// (CreateComment, CreatePullRequest, and check runs through REST.CreateOnce). The POSTs whose repetition
// changes nothing are the exceptions: an installation token, a label (added once), a reaction (GitHub
// answers the existing one).
func replayable(req *http.Request) bool {
	if req.Method != http.MethodPost {
		return true
	}
	p := req.URL.Path
	return strings.HasSuffix(p, "/access_tokens") || strings.HasSuffix(p, "/labels") || strings.HasSuffix(p, "/reactions")
}

// primaryLimited reports a primary rate limit: 403 or 429 with no requests remaining.
func primaryLimited(resp *http.Response) bool {
	return (resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusTooManyRequests) &&
		resp.Header.Get("X-RateLimit-Remaining") == "0"
}

// resetWait is how long until the limit resets: X-RateLimit-Reset (epoch seconds, so rounded up by a
// second's fraction) or Retry-After, whichever is later, plus a small margin.
func resetWait(resp *http.Response, now time.Time) time.Duration {
	var wait time.Duration
	if s, err := strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
		wait = time.Unix(s, 0).Sub(now)
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		wait = max(wait, time.Duration(s)*time.Second)
	}
	return max(wait, 0) + 100*time.Millisecond
}

func discard(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// tokenTransport adds a static token (plain token mode).
type tokenTransport struct {
	token string
	next  http.RoundTripper
}

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

type nopObserver struct{}

func (nopObserver) APICall(string, int)   {}
func (nopObserver) RateLimit(string, int) {}

var errNoInstallation = errors.New("the event names no GitHub App installation")
