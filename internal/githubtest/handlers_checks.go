package githubtest

import (
	"net/http"
	"slices"
	"time"
)

// checkRunRequest is the body of both creating and updating a check run.
type checkRunRequest struct {
	Name        *string    `json:"name"`
	HeadSHA     string     `json:"head_sha"`
	DetailsURL  *string    `json:"details_url"`
	ExternalID  *string    `json:"external_id"`
	Status      *string    `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	Output      *struct {
		Title       *string      `json:"title"`
		Summary     *string      `json:"summary"`
		Text        *string      `json:"text"`
		Annotations []Annotation `json:"annotations"`
	} `json:"output"`
}

// apply updates cr as GitHub does: a conclusion completes the run; output fields replace, annotations
// accumulate.
func (req *checkRunRequest) apply(cr *CheckRun, now time.Time) reply {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&cr.Name, req.Name)
	set(&cr.DetailsURL, req.DetailsURL)
	set(&cr.ExternalID, req.ExternalID)
	set(&cr.Status, req.Status)
	set(&cr.Conclusion, req.Conclusion)
	if req.StartedAt != nil {
		cr.StartedAt = req.StartedAt.UTC()
	}
	if req.CompletedAt != nil {
		cr.CompletedAt = req.CompletedAt.UTC()
	}
	if req.Output != nil {
		set(&cr.Output.Title, req.Output.Title)
		set(&cr.Output.Summary, req.Output.Summary)
		set(&cr.Output.Text, req.Output.Text)
		cr.Output.Annotations = append(cr.Output.Annotations, req.Output.Annotations...)
	}
	if cr.Conclusion != "" || req.CompletedAt != nil {
		cr.Status = "completed"
	}
	if cr.Status == "completed" && cr.Conclusion == "" {
		return failed(http.StatusUnprocessableEntity, "Invalid request.\n\nNo conclusion given for a completed check run.")
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = now
	}
	return reply{}
}

func createCheckRun(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	var req checkRunRequest
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	now := c.s.tick()
	cr := &CheckRun{ID: c.s.newID(), HeadSHA: req.HeadSHA, Status: "queued", StartedAt: now, Received: time.Now()}
	if rep := req.apply(cr, now); rep.status != 0 {
		return rep
	}
	r.checkRuns = append(r.checkRuns, cr)
	return reply{http.StatusCreated, c.checkRunJSON(r, cr)}
}

func (c *call) checkRun() (*repoState, *CheckRun) {
	r := c.repo()
	if r == nil {
		return nil, nil
	}
	for _, cr := range r.checkRuns {
		if cr.ID == c.intParam("check_run_id") {
			return r, cr
		}
	}
	return nil, nil
}

func getCheckRun(c *call) reply {
	r, cr := c.checkRun()
	if cr == nil {
		return notFound()
	}
	return reply{http.StatusOK, c.checkRunJSON(r, cr)}
}

func updateCheckRun(c *call) reply {
	r, cr := c.checkRun()
	if cr == nil {
		return notFound()
	}
	var req checkRunRequest
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	updated := *cr
	updated.Output.Annotations = slices.Clone(cr.Output.Annotations)
	if rep := req.apply(&updated, c.s.tick()); rep.status != 0 {
		return rep
	}
	updated.Updates++
	*cr = updated
	return reply{http.StatusOK, c.checkRunJSON(r, cr)}
}

// resolveRef turns a branch name, "heads/<branch>", "refs/heads/<branch>" or tag into its SHA; anything
// else is taken as a SHA.
func resolveRef(r *repoState, ref string) string {
	for _, k := range []string{ref, "heads/" + ref, "tags/" + ref} {
		if sha, ok := r.refs[trimRefs(k)]; ok {
			return sha
		}
	}
	return ref
}

func trimRefs(ref string) string {
	if len(ref) > 5 && ref[:5] == "refs/" {
		return ref[5:]
	}
	return ref
}

// listCheckRunsForRef filters by check_name and status; filter=latest (the default) keeps the newest run
// of each name. Newest first.
func listCheckRunsForRef(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	sha := resolveRef(r, c.param("ref"))
	seen := map[string]bool{}
	var out []any
	for _, cr := range slices.Backward(r.checkRuns) {
		if cr.HeadSHA != sha {
			continue
		}
		if name := c.query.Get("check_name"); name != "" && cr.Name != name {
			continue
		}
		if status := c.query.Get("status"); status != "" && cr.Status != status {
			continue
		}
		if c.query.Get("filter") != "all" {
			if seen[cr.Name] {
				continue
			}
			seen[cr.Name] = true
		}
		out = append(out, c.checkRunJSON(r, cr))
	}
	total := len(out)
	return reply{http.StatusOK, obj{"total_count": total, "check_runs": orEmpty(paginate(c, out))}}
}
