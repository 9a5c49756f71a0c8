package ghclient

import (
	"context"

	"github.com/google/go-github/v92/github"
)

// REST is a client's go-github client: authenticated as the client is, every request through its
// transport (retries, rate limits, recorded calls), with its create-once rule (CreateOnce). It is for the
// calls GitHub leaves out on purpose: the Checks API, which only bot/checkrun may call, through its
// internal checksapi package (internal/archtest fails on any other use).
type REST struct {
	Client *github.Client
	c      *client
}

// RESTOf is the REST client of a GitHub this package made (New, Clients.For); false for any other
// implementation (a test's fake).
func RESTOf(gh GitHub) (*REST, bool) {
	c, ok := gh.(*client)
	if !ok {
		return nil, false
	}
	return &REST{Client: c.gh, c: c}, true
}

// CreateOnce runs create; after a failure that leaves it unsure whether GitHub created it (a 5xx, no
// answer), it runs find (0: not there) before creating again, within the client's retries and backoff.
func (r *REST) CreateOnce(ctx context.Context, create, find func() (int64, error)) (int64, error) {
	return r.c.createOnce(ctx, create, find)
}

// Wrap names a failed call and keeps its HTTP status reachable through StatusOf.
func (r *REST) Wrap(resp *github.Response, err error, format string, args ...any) error {
	return wrap(resp, err, format, args...)
}
