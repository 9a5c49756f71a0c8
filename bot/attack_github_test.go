package bot

import (
	"net/http"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
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
