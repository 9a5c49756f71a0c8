package githubtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"time"
)

func listComments(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	var since time.Time
	if v := c.query.Get("since"); v != "" {
		since, _ = time.Parse(time.RFC3339, v) // validated as date-time
	}
	var out []any
	for _, cm := range r.comments {
		if cm.Issue == pr.Number && !cm.UpdatedAt.Before(since) {
			out = append(out, c.commentJSON(r, cm))
		}
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

func createComment(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	var req struct {
		Body string `json:"body"`
	}
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	now := c.s.tick()
	cm := &Comment{ID: c.s.newID(), Issue: pr.Number, User: c.s.actor, Body: req.Body, CreatedAt: now, UpdatedAt: now}
	r.comments = append(r.comments, cm)
	c.header.Set("Location", c.apiURL("/repos/%s/issues/comments/%d", r.fullName(), cm.ID))
	return reply{http.StatusCreated, c.commentJSON(r, cm)}
}

func (c *call) comment() (*repoState, *Comment) {
	r := c.repo()
	if r == nil {
		return nil, nil
	}
	for _, cm := range r.comments {
		if cm.ID == c.intParam("comment_id") {
			return r, cm
		}
	}
	return nil, nil
}

func getComment(c *call) reply {
	r, cm := c.comment()
	if cm == nil {
		return notFound()
	}
	return reply{http.StatusOK, c.commentJSON(r, cm)}
}

func updateComment(c *call) reply {
	r, cm := c.comment()
	if cm == nil {
		return notFound()
	}
	var req struct {
		Body string `json:"body"`
	}
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	cm.Body = req.Body
	cm.UpdatedAt = c.s.tick()
	cm.Edits++
	return reply{http.StatusOK, c.commentJSON(r, cm)}
}

func deleteComment(c *call) reply {
	r, cm := c.comment()
	if cm == nil {
		return notFound()
	}
	r.comments = slices.DeleteFunc(r.comments, func(x *Comment) bool { return x == cm })
	return reply{status: http.StatusNoContent}
}

func listReactions(c *call) reply {
	_, cm := c.comment()
	if cm == nil {
		return notFound()
	}
	var out []any
	for _, re := range cm.Reactions {
		if content := c.query.Get("content"); content == "" || content == re.Content {
			out = append(out, c.reactionJSON(re))
		}
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

// createReaction answers 200 with the existing reaction when the actor already reacted so, 201 otherwise.
func createReaction(c *call) reply {
	_, cm := c.comment()
	if cm == nil {
		return notFound()
	}
	var req struct {
		Content string `json:"content"`
	}
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	for _, re := range cm.Reactions {
		if re.User == c.s.actor && re.Content == req.Content {
			return reply{http.StatusOK, c.reactionJSON(re)}
		}
	}
	re := Reaction{ID: c.s.newID(), User: c.s.actor, Content: req.Content}
	cm.Reactions = append(cm.Reactions, re)
	return reply{http.StatusCreated, c.reactionJSON(re)}
}

func (c *call) labelsJSON(r *repoState, pr *PullRequest) []any {
	out := []any{}
	for _, l := range pr.Labels {
		out = append(out, c.labelJSON(r, l))
	}
	return out
}

func listLabels(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	return reply{http.StatusOK, orEmpty(paginate(c, c.labelsJSON(r, pr)))}
}

// addLabels accepts every body form GitHub documents: ["a"], {"labels": ["a"]}, [{"name": "a"}],
// {"labels": [{"name": "a"}]} and "a".
func addLabels(c *call) reply {
	r, pr := c.pull()
	if pr == nil {
		return notFound()
	}
	for _, name := range labelNames(c.body) {
		if !slices.Contains(pr.Labels, name) {
			pr.Labels = append(pr.Labels, name)
		}
	}
	return reply{http.StatusOK, c.labelsJSON(r, pr)}
}

func labelNames(body []byte) []string {
	var wrapped struct {
		Labels json.RawMessage `json:"labels"`
	}
	if json.Unmarshal(body, &wrapped) == nil && wrapped.Labels != nil {
		body = wrapped.Labels
	}
	var one string
	if json.Unmarshal(body, &one) == nil {
		return []string{one}
	}
	var names []string
	if json.Unmarshal(body, &names) == nil {
		return names
	}
	var objs []struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(body, &objs)
	for _, o := range objs {
		names = append(names, o.Name)
	}
	return names
}

func removeLabel(c *call) reply {
	r, pr := c.pull()
	if pr == nil || !slices.Contains(pr.Labels, c.param("name")) {
		return failed(http.StatusNotFound, "Label does not exist")
	}
	pr.Labels = slices.DeleteFunc(pr.Labels, func(l string) bool { return l == c.param("name") })
	return reply{http.StatusOK, c.labelsJSON(r, pr)}
}
