package githubtest

import (
	"fmt"
	"hash/fnv"
	"strings"
	"time"
)

// The JSON objects the fake answers with: the fields GitHub documents that go-github decodes, named and
// typed as in GitHub's response schemas (checked on every answer, see Server.checkResponse).

const webURL = "https://github.com"

type obj = map[string]any

func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// userID derives a stable id for a login.
func userID(login string) int64 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(strings.ToLower(login)))
	return int64(h.Sum32())
}

func (c *call) apiURL(format string, args ...any) string {
	return c.s.URL + fmt.Sprintf(format, args...)
}

func (c *call) userJSON(login string) obj {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return obj{
		"login":      login,
		"id":         userID(login),
		"node_id":    fmt.Sprintf("U_%d", userID(login)),
		"avatar_url": "https://avatars.githubusercontent.com/u/" + fmt.Sprint(userID(login)),
		"url":        c.apiURL("/users/%s", login),
		"html_url":   webURL + "/" + login,
		"type":       typ,
		"site_admin": false,
	}
}

func (c *call) repoJSON(r *repoState) obj {
	return obj{
		"id":             r.id,
		"node_id":        fmt.Sprintf("R_%d", r.id),
		"name":           r.name,
		"full_name":      r.fullName(),
		"owner":          c.userJSON(r.owner),
		"private":        false,
		"fork":           false,
		"archived":       false,
		"visibility":     "public",
		"default_branch": r.defaultBranch,
		"html_url":       webURL + "/" + r.fullName(),
		"url":            c.apiURL("/repos/%s", r.fullName()),
	}
}

func (c *call) labelJSON(r *repoState, name string) obj {
	return obj{
		"id":      userID(r.fullName() + "\x00label\x00" + name),
		"node_id": "LA_" + name,
		"url":     c.apiURL("/repos/%s/labels/%s", r.fullName(), name),
		"name":    name,
		"color":   "ededed",
		"default": false,
	}
}

func mergeableState(pr *PullRequest) string {
	switch {
	case pr.Merged || pr.State == "closed":
		return "unknown"
	case pr.Mergeable == nil:
		return "unknown"
	case *pr.Mergeable:
		return "clean"
	}
	return "dirty"
}

// pullJSON is a pull request; full adds the fields only the single-pull-request endpoint returns.
func (c *call) pullJSON(r *repoState, pr *PullRequest, full bool) obj {
	labels := make([]any, 0, len(pr.Labels))
	for _, l := range pr.Labels {
		labels = append(labels, c.labelJSON(r, l))
	}
	api := c.apiURL("/repos/%s/pulls/%d", r.fullName(), pr.Number)
	branch := func(ref, sha string) obj {
		return obj{
			"label": r.owner + ":" + ref,
			"ref":   ref,
			"sha":   sha,
			"user":  c.userJSON(r.owner),
			"repo":  c.repoJSON(r),
		}
	}
	o := obj{
		"id":                  int64(pr.Number)*1_000_003 + r.id,
		"node_id":             fmt.Sprintf("PR_%d_%d", r.id, pr.Number),
		"number":              pr.Number,
		"state":               pr.State,
		"locked":              false,
		"title":               pr.Title,
		"body":                orNil(pr.Body),
		"user":                c.userJSON(pr.User),
		"labels":              labels,
		"draft":               pr.Draft,
		"head":                branch(pr.HeadRef, pr.HeadSHA),
		"base":                branch(pr.BaseRef, pr.BaseSHA),
		"url":                 api,
		"html_url":            fmt.Sprintf("%s/%s/pull/%d", webURL, r.fullName(), pr.Number),
		"issue_url":           c.apiURL("/repos/%s/issues/%d", r.fullName(), pr.Number),
		"comments_url":        c.apiURL("/repos/%s/issues/%d/comments", r.fullName(), pr.Number),
		"commits_url":         api + "/commits",
		"review_comments_url": api + "/comments",
		"statuses_url":        c.apiURL("/repos/%s/statuses/%s", r.fullName(), pr.HeadSHA),
		"merge_commit_sha":    orNil(pr.MergeCommitSHA),
		"merged_at":           nil,
		"closed_at":           nil,
		"created_at":          ts(epoch),
		"updated_at":          ts(epoch),
		"author_association":  "CONTRIBUTOR",
		"assignee":            nil,
		"milestone":           nil,
		"auto_merge":          nil,
	}
	if pr.Merged || pr.State == "closed" {
		o["closed_at"] = ts(epoch.Add(time.Hour))
	}
	if pr.Merged {
		o["merged_at"] = ts(epoch.Add(time.Hour))
	}
	if full {
		o["merged"] = pr.Merged
		o["mergeable"] = nil
		if pr.Mergeable != nil {
			o["mergeable"] = *pr.Mergeable
		}
		o["mergeable_state"] = mergeableState(pr)
		o["maintainer_can_modify"] = false
		o["changed_files"] = len(pr.Files)
		o["comments"] = 0
		for _, cm := range r.comments {
			if cm.Issue == pr.Number {
				o["comments"] = o["comments"].(int) + 1
			}
		}
		o["review_comments"] = 0
		o["commits"] = 1
		o["additions"] = 0
		o["deletions"] = 0
		if pr.Merged {
			o["merged_by"] = c.userJSON(c.s.actor)
		} else {
			o["merged_by"] = nil
		}
	}
	return o
}

func (c *call) checkRunJSON(r *repoState, cr *CheckRun) obj {
	var pulls []any
	for _, n := range sortedPulls(r) {
		pr := r.pulls[n]
		if pr.HeadSHA == cr.HeadSHA && pr.State == "open" {
			pulls = append(pulls, obj{
				"id":     int64(pr.Number)*1_000_003 + r.id,
				"number": pr.Number,
				"url":    c.apiURL("/repos/%s/pulls/%d", r.fullName(), pr.Number),
				"head":   obj{"ref": pr.HeadRef, "sha": pr.HeadSHA, "repo": obj{"id": r.id, "name": r.name, "url": c.apiURL("/repos/%s", r.fullName())}},
				"base":   obj{"ref": pr.BaseRef, "sha": pr.BaseSHA, "repo": obj{"id": r.id, "name": r.name, "url": c.apiURL("/repos/%s", r.fullName())}},
			})
		}
	}
	if pulls == nil {
		pulls = []any{}
	}
	return obj{
		"id":           cr.ID,
		"node_id":      fmt.Sprintf("CR_%d", cr.ID),
		"name":         cr.Name,
		"head_sha":     cr.HeadSHA,
		"external_id":  cr.ExternalID,
		"url":          c.apiURL("/repos/%s/check-runs/%d", r.fullName(), cr.ID),
		"html_url":     fmt.Sprintf("%s/%s/runs/%d", webURL, r.fullName(), cr.ID),
		"details_url":  orNil(cr.DetailsURL),
		"status":       cr.Status,
		"conclusion":   orNil(cr.Conclusion),
		"started_at":   ts(cr.StartedAt),
		"completed_at": ts(cr.CompletedAt),
		"output": obj{
			"title":             orNil(cr.Output.Title),
			"summary":           orNil(cr.Output.Summary),
			"text":              orNil(cr.Output.Text),
			"annotations_count": len(cr.Output.Annotations),
			"annotations_url":   c.apiURL("/repos/%s/check-runs/%d/annotations", r.fullName(), cr.ID),
		},
		"check_suite":   obj{"id": userID(r.fullName() + "\x00suite\x00" + cr.HeadSHA)},
		"app":           c.appJSON(),
		"pull_requests": pulls,
	}
}

func (c *call) appJSON() obj {
	return obj{
		"id":           1,
		"slug":         "catalogbot",
		"node_id":      "A_1",
		"name":         "catalogbot",
		"owner":        c.userJSON("catalogbot"),
		"description":  nil,
		"external_url": "https://github.com/apps/catalogbot",
		"html_url":     "https://github.com/apps/catalogbot",
		"created_at":   ts(epoch),
		"updated_at":   ts(epoch),
		"permissions":  obj{"checks": "write", "pull_requests": "write", "issues": "write", "statuses": "write", "contents": "write", "metadata": "read"},
		"events":       []any{"pull_request", "issue_comment", "check_suite", "check_run"},
	}
}

func (c *call) commentJSON(r *repoState, cm *Comment) obj {
	counts := obj{"+1": 0, "-1": 0, "laugh": 0, "confused": 0, "heart": 0, "hooray": 0, "rocket": 0, "eyes": 0}
	for _, re := range cm.Reactions {
		counts[re.Content] = counts[re.Content].(int) + 1
	}
	counts["total_count"] = len(cm.Reactions)
	counts["url"] = c.apiURL("/repos/%s/issues/comments/%d/reactions", r.fullName(), cm.ID)
	return obj{
		"id":                 cm.ID,
		"node_id":            fmt.Sprintf("IC_%d", cm.ID),
		"url":                c.apiURL("/repos/%s/issues/comments/%d", r.fullName(), cm.ID),
		"html_url":           fmt.Sprintf("%s/%s/pull/%d#issuecomment-%d", webURL, r.fullName(), cm.Issue, cm.ID),
		"issue_url":          c.apiURL("/repos/%s/issues/%d", r.fullName(), cm.Issue),
		"body":               cm.Body,
		"user":               c.userJSON(cm.User),
		"created_at":         ts(cm.CreatedAt),
		"updated_at":         ts(cm.UpdatedAt),
		"author_association": "NONE",
		"reactions":          counts,
	}
}

func (c *call) reactionJSON(re Reaction) obj {
	return obj{
		"id":         re.ID,
		"node_id":    fmt.Sprintf("REA_%d", re.ID),
		"user":       c.userJSON(re.User),
		"content":    re.Content,
		"created_at": ts(epoch),
	}
}

func (c *call) reviewJSON(r *repoState, n int, rv *Review) obj {
	html := fmt.Sprintf("%s/%s/pull/%d#pullrequestreview-%d", webURL, r.fullName(), n, rv.ID)
	pull := c.apiURL("/repos/%s/pulls/%d", r.fullName(), n)
	return obj{
		"id":                 rv.ID,
		"node_id":            fmt.Sprintf("PRR_%d", rv.ID),
		"user":               c.userJSON(rv.User),
		"body":               rv.Body,
		"state":              rv.State,
		"commit_id":          rv.CommitID,
		"submitted_at":       ts(rv.SubmittedAt),
		"html_url":           html,
		"pull_request_url":   pull,
		"author_association": "NONE",
		"_links":             obj{"html": obj{"href": html}, "pull_request": obj{"href": pull}},
	}
}

// statusJSON is a commit status; the combined status lists them without their creator.
func (c *call) statusJSON(r *repoState, st *Status, withCreator bool) obj {
	o := obj{
		"id":          st.ID,
		"node_id":     fmt.Sprintf("SC_%d", st.ID),
		"url":         c.apiURL("/repos/%s/statuses/%s", r.fullName(), st.SHA),
		"avatar_url":  nil,
		"state":       st.State,
		"description": orNil(st.Description),
		"target_url":  orNil(st.TargetURL),
		"context":     st.Context,
		"created_at":  ts(st.CreatedAt),
		"updated_at":  ts(st.CreatedAt),
	}
	if withCreator {
		o["creator"] = c.userJSON(st.Creator)
	}
	return o
}
