package bot

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// GitHub applies the POST creating the check run, and the one creating the readiness comment, then
// answers 502 or drops the connection. The bot does not send the create again blindly: it looks its check
// run up by external ID on the commit and its comment by its body, finds them, and goes on with them:
// exactly one check run (completed, none left in progress) and one comment.
func TestAttackRetriedPostDuplicates(t *testing.T) {
	for _, tc := range []struct {
		name              string
		checkRun, comment githubtest.Fault
	}{
		{"502 after applying", githubtest.Fault{Applied: true, Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`},
			githubtest.Fault{Applied: true, Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`}},
		{"connection dropped after applying", githubtest.Fault{Applied: true, Drop: true}, githubtest.Fault{Applied: true, Drop: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n") // not merged: the comment lists the label
			head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
			h.openPR(1, "alice", head, main)
			h.gh.InjectFault("POST", "/repos/octo/catalog/check-runs", 1, tc.checkRun)
			h.gh.InjectFault("POST", "/repos/octo/catalog/issues/1/comments", 1, tc.comment)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
			h.waitIdle()
			posts := map[string]int{}
			for _, r := range h.gh.Requests() {
				if r.Method == "POST" {
					posts[r.Path]++
				}
			}
			runs := h.gh.CheckRuns(repoFull)
			if len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "success" {
				t.Errorf("check runs: %+v (POSTs %v)", runs, posts)
			}
			cs := h.gh.Comments(repoFull, 1)
			if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, readinessMarker) {
				t.Errorf("comments: %+v (POSTs %v)", cs, posts)
			}
			if posts["/repos/octo/catalog/check-runs"] != 1 || posts["/repos/octo/catalog/issues/1/comments"] != 1 {
				t.Errorf("creates sent: %v, want each once", posts)
			}
		})
	}
}

// rateLimitFault is GitHub's primary rate limit answer (status 403 or 429, no requests remaining) whose
// reset is at reset.
func rateLimitFault(status int, reset time.Time) githubtest.Fault {
	f := githubtest.DefaultFault(http.StatusTooManyRequests)
	f.Status = status
	f.Header.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	f.Header.Set("Retry-After", strconv.Itoa(int(time.Until(reset).Seconds())+1))
	return f
}

// A primary rate limit whose reset is beyond the wait bound (github.maxRateLimitWait) does not fail the
// job: it is queued again to run after the reset, without counting the attempt. A check (429, reset 3s
// ahead, bound 1s) then runs to its end: one check run, success, one attempt. A publish (403, reset an
// hour ahead) waits in the queue for the reset, not failed.
func TestAttackLongRateLimit(t *testing.T) {
	t.Run("check", func(t *testing.T) {
		h := newHarness(t, func(h *harness) { h.cfg.GitHub.MaxRateLimitWait = time.Second })
		main := h.seedMain(repoConfig)
		head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
		h.openPR(1, "alice", head, main)
		reset := time.Now().Add(3 * time.Second)
		h.gh.InjectFault("GET", "/repos/octo/catalog/pulls/1", 1, rateLimitFault(http.StatusTooManyRequests, reset))
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
		h.waitIdle()
		runs := h.gh.CheckRuns(repoFull)
		if len(runs) != 1 || runs[0].Conclusion != "success" {
			t.Errorf("check runs: %+v", runs)
		}
		jobs, err := h.q.List(t.Context(), 10)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			if j.Kind == kindCheck && (j.Attempts != 1 || j.Finished.Before(reset)) {
				t.Errorf("check job %d: %d attempts, finished %s, want 1 attempt after the reset %s", j.ID, j.Attempts, j.Finished, reset)
			}
		}
		if m := h.get("/metrics"); !strings.Contains(m, `catalogbot_jobs_total{kind="check",outcome="deferred"} 1`) {
			t.Errorf("no deferred check job in the metrics:\n%s", m)
		}
	})
	t.Run("publish", func(t *testing.T) {
		h := newHarness(t)
		base := registrytest.PushBase(t, h.reg.Host)
		main := h.seedMain(repoConfig + "publish:\n  image: " + h.reg.Host + "/ops/catalog:latest\n  base: " + base + "\n")
		after := h.releaseFoo("main", main, "catalog-admin")
		reset := time.Now().Add(time.Hour)
		h.gh.InjectFault("POST", "/repos/octo/catalog/statuses/", 1, rateLimitFault(http.StatusForbidden, reset))
		h.deliver("push", "push/payload.json", repoEdits(map[string]any{"ref": "refs/heads/main", "before": main, "after": after,
			"deleted": false, "created": false, "base_ref": nil, "repository.master_branch": "main"}))
		var job *queue.Job
		h.waitFor("the publish job to be queued after the reset", func() bool {
			jobs, err := h.q.List(t.Context(), 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range jobs {
				if j.Kind == kindPublish && j.State == queue.Queued && j.Error != "" {
					job = j
					return true
				}
				if j.Kind == kindPublish && j.State == queue.Failed {
					t.Fatalf("publish job failed: %s", j.Error)
				}
			}
			return false
		})
		if job.RunAfter.Before(reset) || job.RunAfter.After(reset.Add(5*time.Second)) || job.Attempts != 0 {
			t.Errorf("publish job queued to run at %s with %d attempts counted, want just after the reset %s and 0", job.RunAfter, job.Attempts, reset)
		}
	})
}
