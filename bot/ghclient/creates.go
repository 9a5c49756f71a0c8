package ghclient

import (
	"context"
	"errors"
	"net/http"
)

// Creates are never blindly retried. A POST GitHub may have applied (it answered 5xx, or the connection
// dropped before the answer) is not sent again by the transport; the client looks for what it would have
// created first (a comment by its body, a pull request by its branch; a check run by its external ID on
// its commit: bot/checkrun's checksapi, through REST.CreateOnce), and creates it again only when it is
// not there.

// unsure reports whether a failed create may have been applied: a 5xx or no answer at all.
func unsure(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	st := StatusOf(err)
	return st == 0 || st >= http.StatusInternalServerError && st != http.StatusNotImplemented
}

// createOnce runs create; after an unsure failure it runs find (0: not there), then create again, up to
// c.retries times with backoff.
func (c *client) createOnce(ctx context.Context, create func() (int64, error), find func() (int64, error)) (int64, error) {
	id, err := create()
	delay := c.backoff
	for i := 0; i < c.retries && unsure(ctx, err); i++ {
		if serr := sleep(ctx, delay); serr != nil {
			return 0, errors.Join(err, serr)
		}
		delay *= 2
		found, ferr := find()
		if ferr != nil {
			err = errors.Join(err, ferr)
			continue
		}
		if found != 0 {
			return found, nil
		}
		id, err = create()
	}
	return id, err
}

func (c *client) CreateComment(ctx context.Context, repo Repo, number int, body string) (int64, error) {
	return c.createOnce(ctx, func() (int64, error) { return c.createComment(ctx, repo, number, body) }, func() (int64, error) {
		cs, err := c.Comments(ctx, repo, number)
		if err != nil {
			return 0, err
		}
		for i := len(cs) - 1; i >= 0; i-- {
			if cs[i].Body == body {
				return cs[i].ID, nil
			}
		}
		return 0, nil
	})
}

func (c *client) CreatePullRequest(ctx context.Context, repo Repo, np NewPullRequest) (*PullRequest, error) {
	var out *PullRequest
	create := func() (int64, error) {
		pr, err := c.createPullRequest(ctx, repo, np)
		if err != nil {
			return 0, err
		}
		out = pr
		return int64(pr.Number), nil
	}
	find := func() (int64, error) {
		pr, err := c.FindPullRequest(ctx, repo, np.Head)
		if err != nil || pr == nil {
			return 0, err
		}
		out = pr
		return int64(pr.Number), nil
	}
	if _, err := c.createOnce(ctx, create, find); err != nil {
		return nil, err
	}
	return out, nil
}

// OpenOrFind opens the pull request np, or, when GitHub refuses (one of the branch is open already,
// perhaps opened by an answer that was lost), returns the newest pull request of its head branch; the
// caller decides whether that one is its own (by its head commit).
func OpenOrFind(ctx context.Context, gh GitHub, repo Repo, np NewPullRequest) (*PullRequest, error) {
	pr, err := gh.CreatePullRequest(ctx, repo, np)
	if err == nil {
		return pr, nil
	}
	found, ferr := gh.FindPullRequest(ctx, repo, np.Head)
	if ferr != nil || found == nil {
		return nil, errors.Join(err, ferr)
	}
	return found, nil
}
