package githubtest

import (
	"net/http"
	"slices"
	"strings"
)

// repo is the repository the request's owner and repo parameters name, or nil.
func (c *call) repo() *repoState { return c.s.repoLocked(c.param("owner"), c.param("repo")) }

// pull is the repository and pull request the request names (by pull_number or issue_number), or nils.
func (c *call) pull() (*repoState, *PullRequest) {
	r := c.repo()
	if r == nil {
		return nil, nil
	}
	name := "pull_number"
	if _, ok := c.rt.params[name]; !ok {
		name = "issue_number"
	}
	pr := r.pulls[int(c.intParam(name))]
	if pr == nil {
		return nil, nil
	}
	return r, pr
}

func sortedPulls(r *repoState) []int {
	ns := make([]int, 0, len(r.pulls))
	for n := range r.pulls {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	return ns
}

func getRepo(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	return reply{http.StatusOK, c.repoJSON(r)}
}

// listPulls filters by state (default open), head ("owner:branch") and base; newest first, as GitHub's
// default sort (created, descending).
func listPulls(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	state := c.query.Get("state")
	if state == "" {
		state = "open"
	}
	ns := sortedPulls(r)
	if c.query.Get("direction") != "asc" {
		slices.Reverse(ns)
	}
	var out []any
	for _, n := range ns {
		pr := r.pulls[n]
		if state != "all" && pr.State != state {
			continue
		}
		if head := c.query.Get("head"); head != "" {
			owner, branch, ok := strings.Cut(head, ":")
			if !ok {
				owner, branch = r.owner, head
			}
			if !strings.EqualFold(owner, r.owner) || branch != pr.HeadRef {
				continue
			}
		}
		if base := c.query.Get("base"); base != "" && base != pr.BaseRef {
			continue
		}
		out = append(out, c.pullJSON(r, pr, false))
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

func getPull(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	return reply{http.StatusOK, c.pullJSON(r, pr, true)}
}

func listPullFiles(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	var out []any
	for _, f := range pr.Files {
		status := f.Status
		if status == "" {
			status = "modified"
		}
		sha := fakeSHA(r.fullName(), pr.HeadSHA, f.Name)
		blob := webURL + "/" + r.fullName() + "/blob/" + pr.HeadSHA + "/" + f.Name
		out = append(out, obj{
			"sha": sha, "filename": f.Name, "status": status,
			"additions": 0, "deletions": 0, "changes": 0,
			"blob_url": blob, "raw_url": strings.Replace(blob, "/blob/", "/raw/", 1),
			"contents_url": c.apiURL("/repos/%s/contents/%s?ref=%s", r.fullName(), f.Name, pr.HeadSHA),
		})
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

func listReviews(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	var out []any
	for _, rv := range r.reviews[pr.Number] {
		out = append(out, c.reviewJSON(r, pr.Number, rv))
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

// getMerged answers 204 for a merged pull request and 404 otherwise.
func getMerged(c *call) reply {
	_, pr := c.pull()
	if pr == nil || !pr.Merged {
		return notFound()
	}
	return reply{status: http.StatusNoContent}
}

// mergePull merges as GitHub does: 405 when the pull request cannot be merged (closed, or mergeable is
// false), 409 when the sha guard does not match the head; otherwise the base branch moves to a merge commit.
func mergePull(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	var req struct {
		CommitTitle   string `json:"commit_title"`
		CommitMessage string `json:"commit_message"`
		SHA           string `json:"sha"`
		MergeMethod   string `json:"merge_method"`
	}
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	if pr.Merged || pr.State != "open" || (pr.Mergeable != nil && !*pr.Mergeable) {
		return failed(http.StatusMethodNotAllowed, "Pull Request is not mergeable")
	}
	if req.SHA != "" && req.SHA != pr.HeadSHA {
		return failed(http.StatusConflict, "Head branch was modified. Review and try the merge again.")
	}
	if req.MergeMethod == "" {
		req.MergeMethod = "merge"
	}
	pr.Merged = true
	pr.State = "closed"
	pr.MergedHeadSHA = pr.HeadSHA
	pr.MergeMethod = req.MergeMethod
	pr.CommitTitle = req.CommitTitle
	pr.CommitMessage = req.CommitMessage
	pr.MergeCommitSHA = fakeSHA(r.fullName(), "merge", pr.BaseSHA, pr.HeadSHA, req.MergeMethod)
	r.refs["heads/"+pr.BaseRef] = pr.MergeCommitSHA
	return reply{http.StatusOK, obj{"sha": pr.MergeCommitSHA, "merged": true, "message": "Pull Request successfully merged"}}
}

// listPullsForCommit lists the pull requests whose head is the commit.
func listPullsForCommit(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	var out []any
	for _, n := range sortedPulls(r) {
		if pr := r.pulls[n]; pr.HeadSHA == c.param("commit_sha") || pr.MergeCommitSHA == c.param("commit_sha") {
			out = append(out, c.pullJSON(r, pr, false))
		}
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

// orEmpty keeps an empty list a JSON array rather than null.
func orEmpty(items []any) []any {
	if items == nil {
		return []any{}
	}
	return items
}
