package githubtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Fault is a canned error answer the fake gives instead of handling a (valid) request.
type Fault struct {
	Status int
	Header http.Header
	Body   string
	// Applied makes the fake handle the request first (creating what it creates) and answer the fault
	// instead of its result: GitHub applying a POST and a proxy answering 502.
	Applied bool
	// Drop closes the connection without an answer (with Applied: after handling the request).
	Drop bool
}

type fault struct {
	Fault
	method, prefix string
	left           int
}

// secondaryRateLimitMessage is the message GitHub sends with a secondary rate limit.
const secondaryRateLimitMessage = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. " +
	"If you reach out to GitHub Support for help, please include the request ID FAKE:0."

// FailNext makes the next n valid requests with this method ("" for any) whose escaped path starts with
// pathPrefix answer status, shaped as GitHub answers it:
//
//   - 429: primary rate limit exhausted: X-RateLimit-Remaining 0, X-RateLimit-Reset one second ahead,
//     Retry-After 1, all computed when FailNext is called (go-github reports *github.RateLimitError);
//   - 403: secondary rate limit: GitHub's documented message and documentation_url, Retry-After 1
//     (go-github reports *github.AbuseRateLimitError);
//   - anything else (500, 502, ...): a JSON error body with the status text.
//
// Invalid requests are still answered 400 and do not consume a fault.
func (s *Server) FailNext(method, pathPrefix string, status, n int) {
	s.InjectFault(method, pathPrefix, n, DefaultFault(status))
}

// InjectFault makes the next n valid requests with this method ("" for any) whose escaped path starts with
// pathPrefix answer f. Faults are consumed in the order they were injected.
func (s *Server) InjectFault(method, pathPrefix string, n int, f Fault) {
	if n <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, &fault{Fault: f, method: method, prefix: pathPrefix, left: n})
}

// DefaultFault is the answer FailNext gives for status.
func DefaultFault(status int) Fault {
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	body := map[string]any{"message": http.StatusText(status), "documentation_url": "https://docs.github.com/rest"}
	switch status {
	case http.StatusTooManyRequests:
		h.Set("Retry-After", "1")
		h.Set("X-RateLimit-Limit", "5000")
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Used", "5000")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(time.Now().Add(time.Second).Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
		body["message"] = "API rate limit exceeded for installation ID 1."
		body["documentation_url"] = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"
	case http.StatusForbidden:
		h.Set("Retry-After", "1")
		body["message"] = secondaryRateLimitMessage
		body["documentation_url"] = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	}
	b, _ := json.Marshal(body)
	return Fault{Status: status, Header: h, Body: string(b)}
}

// takeFault consumes the first pending fault matching the request.
func (s *Server) takeFault(method, path string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if (f.method == "" || f.method == method) && strings.HasPrefix(path, f.prefix) {
			f.left--
			if f.left <= 0 {
				s.faults = append(s.faults[:i], s.faults[i+1:]...)
			}
			out := f.Fault
			return &out
		}
	}
	return nil
}
