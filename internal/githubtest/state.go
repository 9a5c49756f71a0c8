package githubtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"
)

// repoState is everything the fake knows about one repository. Guarded by Server.mu.
type repoState struct {
	owner, name   string
	id            int64
	defaultBranch string
	pulls         map[int]*PullRequest
	comments      []*Comment // in creation order
	reviews       map[int][]*Review
	checkRuns     []*CheckRun       // in creation order
	statuses      []*Status         // in creation order
	refs          map[string]string // "heads/main" → SHA
	perms         map[string]string // login → role: admin, maintain, write, triage, read, none
}

func (r *repoState) fullName() string { return r.owner + "/" + r.name }

// fakeSHA derives a stable 40-hex SHA from its parts.
func fakeSHA(parts ...string) string {
	h := sha1.Sum([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:])
}

// epoch is the fake clock's start: timestamps the fake assigns are deterministic.
var epoch = time.Date(2025, time.January, 1, 0, 0, 0, 0, time.UTC)

// tick advances the fake clock by one second. Call with mu held.
func (s *Server) tick() time.Time {
	s.ticks++
	return epoch.Add(time.Duration(s.ticks) * time.Second)
}

// newID returns the next object id. Call with mu held.
func (s *Server) newID() int64 {
	s.ids++
	return s.ids
}

// repoLocked finds a repository by owner and name (case-insensitively, as GitHub does). Call with mu held.
func (s *Server) repoLocked(owner, name string) *repoState {
	return s.repos[strings.ToLower(owner+"/"+name)]
}

// mustRepo resolves "owner/name" for a seeding or inspection helper, failing the test when it is unknown.
// Call with mu held.
func (s *Server) mustRepo(full string) *repoState {
	s.t.Helper()
	owner, name, ok := strings.Cut(full, "/")
	r := s.repoLocked(owner, name)
	if !ok || r == nil {
		s.t.Fatalf("githubtest: repository %q is not seeded (AddRepo or AddPullRequest first)", full)
	}
	return r
}

// AddRepo seeds repository "owner/name" with default branch main at a derived SHA. Adding it again is a
// no-op.
func (s *Server) AddRepo(full string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addRepoLocked(full)
}

func (s *Server) addRepoLocked(full string) *repoState {
	s.t.Helper()
	owner, name, ok := strings.Cut(full, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		s.t.Fatalf("githubtest: repository %q is not of the form owner/name", full)
	}
	if r := s.repoLocked(owner, name); r != nil {
		return r
	}
	r := &repoState{
		owner: owner, name: name, id: s.newID(), defaultBranch: "main",
		pulls: map[int]*PullRequest{}, reviews: map[int][]*Review{},
		refs: map[string]string{"heads/main": fakeSHA(full, "main")}, perms: map[string]string{},
	}
	s.repos[strings.ToLower(full)] = r
	return r
}

// AddPullRequest seeds a pull request (creating the repository if needed), fills in defaults (see
// PullRequest) and returns its number.
func (s *Server) AddPullRequest(repo string, pr PullRequest) int {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.addRepoLocked(repo)
	if pr.Number == 0 {
		pr.Number = 1
		for r.pulls[pr.Number] != nil {
			pr.Number++
		}
	}
	if r.pulls[pr.Number] != nil {
		s.t.Fatalf("githubtest: %s#%d already exists", repo, pr.Number)
	}
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("Pull request %d", pr.Number)
	}
	if pr.User == "" {
		pr.User = "contributor"
	}
	if pr.State == "" {
		pr.State = "open"
	}
	if pr.HeadRef == "" {
		pr.HeadRef = fmt.Sprintf("pr-%d", pr.Number)
	}
	if pr.HeadSHA == "" {
		pr.HeadSHA = fakeSHA(repo, fmt.Sprint(pr.Number), pr.HeadRef)
	}
	if pr.BaseRef == "" {
		pr.BaseRef = r.defaultBranch
	}
	if pr.BaseSHA == "" {
		pr.BaseSHA = r.refs["heads/"+pr.BaseRef]
		if pr.BaseSHA == "" {
			pr.BaseSHA = fakeSHA(repo, pr.BaseRef)
		}
	}
	if r.refs["heads/"+pr.BaseRef] == "" {
		r.refs["heads/"+pr.BaseRef] = pr.BaseSHA
	}
	if pr.Mergeable == nil {
		yes := true
		pr.Mergeable = &yes
	}
	pr = pr.copied()
	r.refs["heads/"+pr.HeadRef] = pr.HeadSHA
	r.pulls[pr.Number] = &pr
	return pr.Number
}

// pullLocked returns the seeded pull request or fails the test. Call with mu held.
func (s *Server) pullLocked(repo string, n int) *PullRequest {
	s.t.Helper()
	pr := s.mustRepo(repo).pulls[n]
	if pr == nil {
		s.t.Fatalf("githubtest: %s#%d is not seeded", repo, n)
	}
	return pr
}

// PushHead moves a pull request's head to sha, as a push to its branch does.
func (s *Server) PushHead(repo string, n int, sha string) {
	s.t.Helper()
	s.editPull(repo, n, func(pr *PullRequest, r *repoState) {
		pr.HeadSHA = sha
		r.refs["heads/"+pr.HeadRef] = sha
	})
}

// SetBase retargets a pull request to the base branch ref, as editing its base does: its base SHA is the
// branch's current tip.
func (s *Server) SetBase(repo string, n int, ref string) {
	s.t.Helper()
	s.editPull(repo, n, func(pr *PullRequest, r *repoState) { pr.BaseRef, pr.BaseSHA = ref, r.refs["heads/"+ref] })
}

// SetState closes ("closed") or reopens ("open") a pull request, as its author or a maintainer does.
func (s *Server) SetState(repo string, n int, state string) {
	s.t.Helper()
	s.editPull(repo, n, func(pr *PullRequest, _ *repoState) { pr.State = state })
}

// SetMergeable sets a pull request's mergeable flag (nil: not computed yet).
func (s *Server) SetMergeable(repo string, n int, mergeable *bool) {
	s.t.Helper()
	s.editPull(repo, n, func(pr *PullRequest, _ *repoState) { pr.Mergeable = mergeable })
}

// editPull changes seeded pull request n of repo (and its repository) under the lock.
func (s *Server) editPull(repo string, n int, edit func(*PullRequest, *repoState)) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	edit(s.pullLocked(repo, n), s.mustRepo(repo))
}

// SetRef points refs/<ref> ("heads/main", "tags/v1") of a seeded repository at sha.
func (s *Server) SetRef(repo, ref, sha string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(repo).refs[strings.TrimPrefix(ref, "refs/")] = sha
}

// AddComment seeds a comment by user on pull request n and returns its id.
func (s *Server) AddComment(repo string, n int, user, body string) int64 {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pullLocked(repo, n)
	now := s.tick()
	c := &Comment{ID: s.newID(), Issue: n, User: user, Body: body, CreatedAt: now, UpdatedAt: now}
	r := s.mustRepo(repo)
	r.comments = append(r.comments, c)
	return c.ID
}

// AddReview seeds a review on pull request n and returns its id.
func (s *Server) AddReview(repo string, n int, rv Review) int64 {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	pr := s.pullLocked(repo, n)
	rv.ID = s.newID()
	if rv.CommitID == "" {
		rv.CommitID = pr.HeadSHA
	}
	if rv.SubmittedAt.IsZero() {
		rv.SubmittedAt = s.tick()
	}
	r := s.mustRepo(repo)
	r.reviews[n] = append(r.reviews[n], &rv)
	return rv.ID
}

// SetPermission gives user a role on a seeded repository: admin, maintain, write, triage, read or none.
// Users without a role have none.
func (s *Server) SetPermission(repo, user, role string) {
	s.t.Helper()
	switch role {
	case "admin", "maintain", "write", "triage", "read", "none":
	default:
		s.t.Fatalf("githubtest: unknown repository role %q", role)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mustRepo(repo).perms[strings.ToLower(user)] = role
}

// AddTeamMember makes user an active member of org's team (by slug) with role "member" or "maintainer".
func (s *Server) AddTeamMember(org, team, user, role string) {
	s.t.Helper()
	if role != "member" && role != "maintainer" {
		s.t.Fatalf("githubtest: unknown team role %q", role)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(org + "/" + team)
	if s.teams[key] == nil {
		s.teams[key] = map[string]string{}
	}
	s.teams[key][strings.ToLower(user)] = role
}

// SetActor sets the login the fake attributes the client's writes to (comments, reactions, statuses,
// merges). The default is "catalogbot[bot]".
func (s *Server) SetActor(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.actor = login
}

// PullRequest returns a copy of pull request n as the fake now knows it.
func (s *Server) PullRequest(repo string, n int) PullRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pullLocked(repo, n).copied()
}

// AddLabel puts label on pull request n, as a person labelling it on GitHub does.
func (s *Server) AddLabel(repo string, n int, label string) {
	s.t.Helper()
	s.editPull(repo, n, func(pr *PullRequest, _ *repoState) {
		if !slices.Contains(pr.Labels, label) {
			pr.Labels = append(pr.Labels, label)
		}
	})
}

// PullRequests returns copies of the repository's pull requests, by number.
func (s *Server) PullRequests(repo string) []PullRequest {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.mustRepo(repo)
	out := make([]PullRequest, 0, len(r.pulls))
	for _, n := range sortedPulls(r) {
		out = append(out, r.pulls[n].copied())
	}
	return out
}

// Merged reports whether pull request n was merged and, if so, the head SHA that was merged.
func (s *Server) Merged(repo string, n int) (bool, string) {
	s.t.Helper()
	pr := s.PullRequest(repo, n)
	return pr.Merged, pr.MergedHeadSHA
}

// CheckRuns returns copies of the repository's check runs in creation order.
func (s *Server) CheckRuns(repo string) []CheckRun {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CheckRun
	for _, cr := range s.mustRepo(repo).checkRuns {
		c := *cr
		c.Output.Annotations = slices.Clone(cr.Output.Annotations)
		out = append(out, c)
	}
	return out
}

// Comments returns copies of the comments on pull request n in creation order.
func (s *Server) Comments(repo string, n int) []Comment {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, c := range s.mustRepo(repo).comments {
		if c.Issue == n {
			cc := *c
			cc.Reactions = slices.Clone(c.Reactions)
			out = append(out, cc)
		}
	}
	return out
}

// Statuses returns copies of the commit statuses created for sha in creation order.
func (s *Server) Statuses(repo, sha string) []Status {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Status
	for _, st := range s.mustRepo(repo).statuses {
		if st.SHA == sha {
			out = append(out, *st)
		}
	}
	return out
}
