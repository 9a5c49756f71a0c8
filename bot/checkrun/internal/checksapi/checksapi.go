// Package checksapi is GitHub's Checks API as the bot calls it: create, update and find a check run, over
// the REST client of a ghclient.GitHub (ghclient.RESTOf), so through its transport (retries, rate limits,
// recorded calls) and its create-once rule. It is internal to bot/checkrun: the compiler holds that
// bot/checkrun is the only writer of check runs, since no other package can name API or reach Of.
package checksapi

import (
	"context"
	"fmt"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/google/go-github/v92/github"
)

// Annotation is a check run annotation; Level is "notice", "warning" or "failure".
type Annotation struct {
	Path               string
	StartLine, EndLine int
	Level              string
	Title, Message     string
}

// CheckRun is a check run to create or update. Empty fields are not sent.
type CheckRun struct {
	Name, HeadSHA          string
	Status, Conclusion     string
	DetailsURL, ExternalID string
	// Output is sent when Title is set (GitHub requires title and summary together).
	Title, Summary string
	Annotations    []Annotation
}

// API is the check run calls.
type API interface {
	// CreateCheckRun creates cr; after an answer that leaves it unsure whether GitHub created it, it looks
	// for it by its external ID before creating another (a check run without one is created once, and
	// the error is the caller's).
	CreateCheckRun(ctx context.Context, repo ghclient.Repo, cr CheckRun) (int64, error)
	UpdateCheckRun(ctx context.Context, repo ghclient.Repo, id int64, cr CheckRun) error
	// FindCheckRun returns the newest check run of name on sha with externalID, or 0.
	FindCheckRun(ctx context.Context, repo ghclient.Repo, sha, name, externalID string) (int64, error)
}

// Of is the Checks API of gh, which must be a client ghclient made.
func Of(gh ghclient.GitHub) (API, error) {
	rest, ok := ghclient.RESTOf(gh)
	if !ok {
		return nil, fmt.Errorf("check runs: %T is not a GitHub client of ghclient", gh)
	}
	return checks{rest}, nil
}

// checks implements API with go-github.
type checks struct{ rest *ghclient.REST }

func (c checks) CreateCheckRun(ctx context.Context, repo ghclient.Repo, cr CheckRun) (int64, error) {
	create := func() (int64, error) { return c.create(ctx, repo, cr) }
	if cr.ExternalID == "" {
		return create() // nothing identifies it: the caller decides
	}
	return c.rest.CreateOnce(ctx, create, func() (int64, error) { return c.FindCheckRun(ctx, repo, cr.HeadSHA, cr.Name, cr.ExternalID) })
}

func (c checks) create(ctx context.Context, repo ghclient.Repo, cr CheckRun) (int64, error) {
	opts := github.CreateCheckRunOptions{Name: cr.Name, HeadSHA: cr.HeadSHA, DetailsURL: ghclient.Optional(cr.DetailsURL),
		ExternalID: ghclient.Optional(cr.ExternalID), Status: ghclient.Optional(cr.Status), Conclusion: ghclient.Optional(cr.Conclusion), Output: output(cr)}
	if cr.Status == "in_progress" {
		opts.StartedAt = &github.Timestamp{Time: time.Now()}
	}
	if cr.Conclusion != "" {
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	run, resp, err := c.rest.Client.Checks.CreateCheckRun(ctx, repo.Owner, repo.Name, opts)
	if err != nil {
		return 0, c.rest.Wrap(resp, err, "create check run %q on %s in %s", cr.Name, cr.HeadSHA, repo)
	}
	return run.GetID(), nil
}

func (c checks) UpdateCheckRun(ctx context.Context, repo ghclient.Repo, id int64, cr CheckRun) error {
	opts := github.UpdateCheckRunOptions{Name: cr.Name, DetailsURL: ghclient.Optional(cr.DetailsURL), ExternalID: ghclient.Optional(cr.ExternalID),
		Status: ghclient.Optional(cr.Status), Conclusion: ghclient.Optional(cr.Conclusion), Output: output(cr)}
	if cr.Conclusion != "" {
		opts.CompletedAt = &github.Timestamp{Time: time.Now()}
	}
	_, resp, err := c.rest.Client.Checks.UpdateCheckRun(ctx, repo.Owner, repo.Name, id, opts)
	return c.rest.Wrap(resp, err, "update check run %d in %s", id, repo)
}

func (c checks) FindCheckRun(ctx context.Context, repo ghclient.Repo, sha, name, externalID string) (int64, error) {
	opts := &github.ListCheckRunsOptions{CheckName: new(name), Filter: new("all"), ListOptions: github.ListOptions{PerPage: 100}}
	for {
		res, resp, err := c.rest.Client.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, sha, opts)
		if err != nil {
			return 0, c.rest.Wrap(resp, err, "list check runs of %s in %s", sha, repo)
		}
		for _, cr := range res.CheckRuns {
			if cr.GetExternalID() == externalID {
				return cr.GetID(), nil
			}
		}
		if resp.NextPage == 0 {
			return 0, nil
		}
		opts.Page = resp.NextPage
	}
}

func output(cr CheckRun) *github.CheckRunOutput {
	if cr.Title == "" {
		return nil
	}
	out := &github.CheckRunOutput{Title: new(cr.Title), Summary: new(cr.Summary)}
	for _, a := range cr.Annotations {
		end := max(a.EndLine, a.StartLine)
		ann := &github.CheckRunAnnotation{Path: new(a.Path), StartLine: new(a.StartLine), EndLine: new(end),
			AnnotationLevel: new(a.Level), Message: new(a.Message)}
		if a.Title != "" {
			ann.Title = new(a.Title)
		}
		out.Annotations = append(out.Annotations, ann)
	}
	return out
}
