package githubtest

import (
	"fmt"
	"net/http"
	"strings"
)

// Branches tells the fake what its git service holds, which the fake does not model: Resolve gives the
// commit a branch of repo points at ("" when there is none), and Opened is told of each pull request the
// API opens (so a test can make refs/pull/N/head). Both are called with the fake's lock held: they must
// not call the Server.
type Branches struct {
	Resolve func(repo, branch string) string
	Opened  func(repo string, n int, headSHA string)
}

// ServeBranches makes the fake resolve pull request heads it has no ref for through b.
func (s *Server) ServeBranches(b Branches) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.branches = b
}

// createPull opens a pull request as GitHub does: 422 when the head branch does not exist or an open pull
// request of the same head into the same base exists already; the author is the authenticated actor.
func createPull(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	var req struct {
		Title string `json:"title"`
		Body  string `json:"body"`
		Head  string `json:"head"`
		Base  string `json:"base"`
		Draft bool   `json:"draft"`
	}
	if err := c.decode(&req); err != nil || req.Head == "" || req.Base == "" {
		return failed(http.StatusUnprocessableEntity, "Validation Failed")
	}
	head := req.Head
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		if !strings.EqualFold(owner, r.owner) {
			return failed(http.StatusUnprocessableEntity, "Validation Failed: head is of another repository")
		}
		head = branch
	}
	sha := r.refs["heads/"+head]
	if sha == "" && c.s.branches.Resolve != nil {
		sha = c.s.branches.Resolve(r.fullName(), head)
	}
	if sha == "" {
		return failed(http.StatusUnprocessableEntity, "Validation Failed: head "+head+" does not exist")
	}
	base := r.refs["heads/"+req.Base]
	if base == "" {
		return failed(http.StatusUnprocessableEntity, "Validation Failed: base "+req.Base+" does not exist")
	}
	n := 1
	for num, pr := range r.pulls {
		n = max(n, num+1)
		if pr.State == "open" && pr.HeadRef == head && pr.BaseRef == req.Base {
			return failed(http.StatusUnprocessableEntity, fmt.Sprintf("Validation Failed: A pull request already exists for %s:%s.", r.owner, head))
		}
	}
	yes := true
	pr := &PullRequest{Number: n, Title: req.Title, Body: req.Body, User: c.s.actor, State: "open", Draft: req.Draft,
		HeadRef: head, HeadSHA: sha, BaseRef: req.Base, BaseSHA: base, Mergeable: &yes}
	r.refs["heads/"+head] = sha
	r.pulls[n] = pr
	if c.s.branches.Opened != nil {
		c.s.branches.Opened(r.fullName(), n, sha)
	}
	return reply{http.StatusCreated, c.pullJSON(r, pr, true)}
}
