// Package ghclient is the bot's view of GitHub: a small interface over the REST calls the handlers make,
// implemented with go-github, authenticated as a GitHub App installation (ghinstallation, one token per
// installation, refreshed before expiry) or with a plain token for one repository. Every request goes
// through a transport that retries GitHub's 5xx answers, waits for the primary rate limit to reset (with
// the request's context) and records calls and the remaining rate limit; go-github-ratelimit sleeps
// through secondary rate limits.
package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v92/github"
)

// Repo names a repository.
type Repo struct{ Owner, Name string }

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo parses "owner/name".
func ParseRepo(full string) (Repo, error) {
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return Repo{}, fmt.Errorf("repository %q is not of the form owner/name", full)
	}
	return Repo{owner, name}, nil
}

// PullRequest is what the bot needs to know about a pull request.
type PullRequest struct {
	Number           int
	Title            string
	State            string // "open" or "closed"
	Draft, Merged    bool
	Mergeable        *bool // nil while GitHub computes it
	Author           string
	HeadSHA, HeadRef string
	BaseRef, BaseSHA string
	Labels           []string
	HTMLURL          string // its page on GitHub
}

// HasLabel reports whether the pull request carries label (case-insensitively, as GitHub matches).
func (p *PullRequest) HasLabel(label string) bool {
	for _, l := range p.Labels {
		if strings.EqualFold(l, label) {
			return true
		}
	}
	return false
}

// Review is a pull request review.
type Review struct {
	User, State, CommitID string
}

// Comment is a pull request conversation comment.
type Comment struct {
	ID         int64
	User, Body string
}

// NewPullRequest is a pull request to open: Head is a branch of the repository itself.
type NewPullRequest struct {
	Title, Body, Head, Base string
}

// Status is a commit status.
type Status struct {
	State, TargetURL, Description, Context string
}

// GitHub is every call the bot's handlers make. It has no check run calls: those are bot/checkrun's
// alone (its internal checksapi package makes them over the client's REST, RESTOf).
type GitHub interface {
	PullRequest(ctx context.Context, repo Repo, number int) (*PullRequest, error)
	// PullRequestsForCommit lists the open pull requests whose head is sha.
	PullRequestsForCommit(ctx context.Context, repo Repo, sha string) ([]int, error)
	Reviews(ctx context.Context, repo Repo, number int) ([]Review, error)
	Comments(ctx context.Context, repo Repo, number int) ([]Comment, error)
	CreateComment(ctx context.Context, repo Repo, number int, body string) (int64, error)
	EditComment(ctx context.Context, repo Repo, id int64, body string) error
	// React adds a reaction ("+1", "-1", "eyes", ...) to a conversation comment.
	React(ctx context.Context, repo Repo, commentID int64, content string) error
	AddLabel(ctx context.Context, repo Repo, number int, label string) error
	RemoveLabel(ctx context.Context, repo Repo, number int, label string) error
	// Merge merges with the head SHA guard and returns the merge commit SHA. Refusals are *MergeError.
	Merge(ctx context.Context, repo Repo, number int, sha, method, title string) (string, error)
	CreateStatus(ctx context.Context, repo Repo, sha string, st Status) error
	// FindPullRequest returns the newest pull request, open or closed, whose head is branch of the
	// repository itself (not of a fork), or nil.
	FindPullRequest(ctx context.Context, repo Repo, branch string) (*PullRequest, error)
	// CreatePullRequest opens a pull request of branch into base; after an answer that leaves it unsure
	// whether GitHub opened it, it looks for it by branch before opening another.
	CreatePullRequest(ctx context.Context, repo Repo, np NewPullRequest) (*PullRequest, error)
	// BranchSHA is the commit a branch points at.
	BranchSHA(ctx context.Context, repo Repo, branch string) (string, error)
	IsTeamMember(ctx context.Context, org, team, login string) (bool, error)
	// Permission is login's role on the repository: admin, maintain, write, triage, read or none.
	Permission(ctx context.Context, repo Repo, login string) (string, error)
	// GitToken is a token for git over HTTPS (empty when git needs none).
	GitToken(ctx context.Context) (string, error)
}

// MergeError is a merge GitHub refused, classified by status code only.
type MergeError struct {
	Status int
	Err    error
}

func (e *MergeError) Error() string {
	return fmt.Sprintf("merge refused (%d, %s): %v", e.Status, e.Reason(), e.Err)
}

func (e *MergeError) Unwrap() error { return e.Err }

// Reason names the refusal by its status code: 405 not mergeable (conflicts, branch protection, checks),
// 409 the head moved since it was tested, 422 the request cannot be processed (merge method not allowed,
// merge already in progress).
func (e *MergeError) Reason() string {
	switch e.Status {
	case http.StatusMethodNotAllowed:
		return "not mergeable"
	case http.StatusConflict:
		return "head moved"
	case http.StatusUnprocessableEntity:
		return "unprocessable"
	}
	return "unexpected status"
}

// StatusOf returns the HTTP status of a failed GitHub call, or 0.
func StatusOf(err error) int {
	var me *MergeError
	if errors.As(err, &me) {
		return me.Status
	}
	var he *httpStatusError
	if errors.As(err, &he) {
		return he.status
	}
	return 0
}

type httpStatusError struct {
	status int
	err    error
}

func (e *httpStatusError) Error() string { return e.err.Error() }
func (e *httpStatusError) Unwrap() error { return e.err }

// RateLimitedUntil reports whether err is GitHub's rate limit (primary, or secondary with a Retry-After)
// that outlasted the wait bound, and when it resets.
func RateLimitedUntil(err error) (time.Time, bool) {
	var rl *github.RateLimitError
	if errors.As(err, &rl) && !rl.Rate.Reset.Time.IsZero() {
		return rl.Rate.Reset.Time, true
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) && ab.RetryAfter != nil {
		return time.Now().Add(*ab.RetryAfter), true
	}
	return time.Time{}, false
}
