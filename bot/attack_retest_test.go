package bot

import (
	"strings"
	"testing"
)

// TestAttackRetestFlood: the author floods her pull request with 20 /retest comments and a commenter
// without triage access with 20 more. Each commenter's /retest is admitted retestLimit times per window and
// refused once with one reply, then ignored; an admitted /retest queues a re-check without stopping the
// running one. The pull request ends with at most 1 + retestLimit check runs, the last one completed, and
// the bot wrote at most 2 + retestLimit replies. (Before: every /retest cancelled the running check and
// queued another, and every unauthorized one got a reply: 20 replies, up to 41 check runs.)
func TestAttackRetestFlood(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main, "do-not-merge/hold") // held: it stays open through the flood
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	for range 20 {
		h.comment(1, "alice", "/retest")
		h.comment(1, "mallory", "/retest")
	}
	h.waitIdle()

	runs := h.checkRunsOn(head)
	if len(runs) > 1+retestLimit {
		t.Errorf("%d check runs on the head after the flood, want at most %d", len(runs), 1+retestLimit)
	}
	completed := 0
	for _, cr := range runs {
		if cr.Status != "completed" {
			t.Errorf("check run %d left %s", cr.ID, cr.Status)
		}
		if cr.Conclusion == "success" {
			completed++
		}
	}
	if completed == 0 {
		t.Errorf("no check run completed successfully: %+v", runs)
	}
	var replies []string
	for _, c := range h.gh.Comments(repoFull, 1) {
		if c.User != "alice" && c.User != "mallory" && !strings.HasPrefix(c.Body, readinessMarker) {
			replies = append(replies, c.Body)
		}
	}
	if len(replies) > 2+retestLimit {
		t.Errorf("%d replies to the flood, want at most %d:\n%s", len(replies), 2+retestLimit, strings.Join(replies, "\n---\n"))
	}
	for _, who := range []string{"@alice", "@mallory"} {
		n := 0
		for _, r := range replies {
			if strings.Contains(r, who+" asked for") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d over-the-limit replies to %s, want 1:\n%s", n, who, strings.Join(replies, "\n---\n"))
		}
	}
}
