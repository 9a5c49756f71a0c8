package githubtest

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// createStatus records a commit status (context defaults to "default", as on GitHub).
func createStatus(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	var req struct {
		State       string  `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     string  `json:"context"`
	}
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	st := &Status{ID: c.s.newID(), SHA: c.param("sha"), State: req.State, Context: req.Context, Creator: c.s.actor, CreatedAt: c.s.tick()}
	if st.Context == "" {
		st.Context = "default"
	}
	if req.TargetURL != nil {
		st.TargetURL = *req.TargetURL
	}
	if req.Description != nil {
		st.Description = *req.Description
	}
	r.statuses = append(r.statuses, st)
	return reply{http.StatusCreated, c.statusJSON(r, st, true)}
}

// statusesFor lists the statuses of the commit ref names, newest first.
func statusesFor(r *repoState, ref string) []*Status {
	sha := resolveRef(r, ref)
	var out []*Status
	for _, st := range slices.Backward(r.statuses) {
		if st.SHA == sha {
			out = append(out, st)
		}
	}
	return out
}

func listStatuses(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	var out []any
	for _, st := range statusesFor(r, c.param("ref")) {
		out = append(out, c.statusJSON(r, st, true))
	}
	return reply{http.StatusOK, orEmpty(paginate(c, out))}
}

// combinedStatus keeps the latest status per context; the combined state is failure if any is error or
// failure, pending if any is pending or there are none, success otherwise.
func combinedStatus(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	seen := map[string]bool{}
	var latest []any
	state := "success"
	all := statusesFor(r, c.param("ref"))
	for _, st := range all {
		if seen[st.Context] {
			continue
		}
		seen[st.Context] = true
		latest = append(latest, c.statusJSON(r, st, false))
		switch {
		case st.State == "error" || st.State == "failure":
			state = "failure"
		case st.State == "pending" && state != "failure":
			state = "pending"
		}
	}
	if len(latest) == 0 {
		state = "pending"
	}
	sha := resolveRef(r, c.param("ref"))
	total := len(latest)
	return reply{http.StatusOK, obj{
		"state":       state,
		"sha":         sha,
		"total_count": total,
		"statuses":    orEmpty(paginate(c, latest)),
		"repository":  c.repoJSON(r),
		"commit_url":  c.apiURL("/repos/%s/commits/%s", r.fullName(), sha),
		"url":         c.apiURL("/repos/%s/commits/%s/status", r.fullName(), sha),
	}}
}

func getRef(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	ref := trimRefs(c.param("ref"))
	sha, ok := r.refs[ref]
	if !ok {
		return notFound()
	}
	return reply{http.StatusOK, obj{
		"ref":     "refs/" + ref,
		"node_id": "REF_" + ref,
		"url":     c.apiURL("/repos/%s/git/refs/%s", r.fullName(), ref),
		"object": obj{
			"type": "commit",
			"sha":  sha,
			"url":  c.apiURL("/repos/%s/git/commits/%s", r.fullName(), sha),
		},
	}}
}

// legacyPermission maps a role to the permission field GitHub keeps for compatibility.
var legacyPermission = map[string]string{
	"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none",
}

// getPermission answers a user's role on the repository; users without one have "none".
func getPermission(c *call) reply {
	r := c.repo()
	if r == nil {
		return notFound()
	}
	user := c.param("username")
	role, ok := r.perms[strings.ToLower(user)]
	if !ok {
		role = "none"
	}
	u := c.userJSON(user)
	u["permissions"] = obj{
		"admin":    role == "admin",
		"maintain": role == "admin" || role == "maintain",
		"push":     role == "admin" || role == "maintain" || role == "write",
		"triage":   role != "read" && role != "none",
		"pull":     role != "none",
	}
	u["role_name"] = role
	return reply{http.StatusOK, obj{"permission": legacyPermission[role], "role_name": role, "user": u}}
}

func getTeamMembership(c *call) reply {
	org, team, user := c.param("org"), c.param("team_slug"), c.param("username")
	role, ok := c.s.teams[strings.ToLower(org+"/"+team)][strings.ToLower(user)]
	if !ok {
		return notFound()
	}
	return reply{http.StatusOK, obj{
		"url":   c.apiURL("/orgs/%s/teams/%s/memberships/%s", org, team, user),
		"role":  role,
		"state": "active",
	}}
}

// createInstallationToken issues a new token valid for an hour of real time (token caches such as
// ghinstallation compare expiry with the wall clock).
func createInstallationToken(c *call) reply {
	var req struct {
		Repositories []string          `json:"repositories"`
		Permissions  map[string]string `json:"permissions"`
	}
	if err := c.decode(&req); err != nil {
		return failed(http.StatusBadRequest, "Problems parsing JSON")
	}
	c.s.tokens++
	perms := obj{"checks": "write", "contents": "write", "issues": "write", "pull_requests": "write", "statuses": "write", "metadata": "read"}
	if len(req.Permissions) > 0 {
		perms = obj{}
		for k, v := range req.Permissions {
			perms[k] = v
		}
	}
	selection := "all"
	if len(req.Repositories) > 0 {
		selection = "selected"
	}
	return reply{http.StatusCreated, obj{
		"token":                fmt.Sprintf("ghs_fake%d_%d", c.intParam("installation_id"), c.s.tokens),
		"expires_at":           time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"permissions":          perms,
		"repository_selection": selection,
	}}
}
