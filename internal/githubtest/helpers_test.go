package githubtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v92/github"
)

// capturingTB records Errorf calls instead of failing, so tests can assert the fake reports violations.
// Everything else (Helper, Cleanup, Fatalf, Context) goes to the real test.
type capturingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (c *capturingTB) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errors = append(c.errors, fmt.Sprintf(format, args...))
}

func (c *capturingTB) captured() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

// wantCaptured fails unless exactly one error was captured and it contains every fragment.
func (c *capturingTB) wantCaptured(t *testing.T, fragments ...string) {
	t.Helper()
	got := c.captured()
	if len(got) != 1 {
		t.Fatalf("captured %d errors, want 1: %q", len(got), got)
	}
	for _, f := range fragments {
		if !strings.Contains(got[0], f) {
			t.Errorf("captured error %q does not mention %q", got[0], f)
		}
	}
}

// newClient returns a go-github client talking to the fake.
func newClient(t testing.TB, s *Server) *github.Client {
	t.Helper()
	base := s.URL + "/"
	c, err := github.NewClient(github.WithURLs(&base, nil), github.WithAuthToken("ghs_test"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ctx(t testing.TB) context.Context { return t.Context() }

func parseQuery(q string) (url.Values, error) { return url.ParseQuery(q) }
