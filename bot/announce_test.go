package bot

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// checkRunsOn are the check runs on a commit.
func (h *harness) checkRunsOn(sha string) []githubtest.CheckRun {
	var out []githubtest.CheckRun
	for _, cr := range h.gh.CheckRuns(repoFull) {
		if cr.HeadSHA == sha {
			out = append(out, cr)
		}
	}
	return out
}

// waitCheckRun waits until the only check run on sha satisfies cond.
func (h *harness) waitCheckRun(what, sha string, cond func(githubtest.CheckRun) bool) {
	h.t.Helper()
	h.waitFor(what, func() bool {
		runs := h.checkRunsOn(sha)
		return len(runs) == 1 && cond(runs[0])
	})
}

func queuedInProgress(cr githubtest.CheckRun) bool {
	return cr.Status == "in_progress" && cr.Output.Title == "Queued"
}

// A check run is in progress as soon as its delivery is queued, while the only worker is busy. A queued
// check that a newer push supersedes, or that a closed pull request cancels, gets its check run closed as
// cancelled; a head that moved before its check started is not reported under the old commit. Every
// commit ends with exactly one check run, none left in progress.
func TestCheckRunsAreAnnouncedWhenQueued(t *testing.T) {
	h := newHarness(t, func(h *harness) { h.cfg.Queue.Workers = 1 })
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n") // no merges: keep main still
	commit := func(label string) string {
		return h.label(h.git.Commit("alice/"+strings.ToLower(label), main, "alice", "release "+label,
			h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0"}})), label)
	}
	// commit pushes the bundle images, which goes through the blocked stage: make every commit first.
	busy := commit("BUSY")
	a, b, c := commit("A"), commit("B"), commit("C")
	d, e := commit("D"), commit("E")
	h.openPR(1, "alice", busy, main)
	h.block.block()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", busy, main, nil))
	<-h.block.arrived // the only worker is in the images stage of pull request 1

	// Superseded while queued.
	h.openPR(2, "alice", a, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(2, "alice", a, main, nil))
	h.waitCheckRun("the queued check of A in progress", a, queuedInProgress)
	h.gh.PushHead(repoFull, 2, b)
	h.git.SetPull(2, b)
	h.deliver("pull_request", "pull_request/synchronize.payload.json", prEdits(2, "alice", b, main, nil))
	h.waitCheckRun("A's check run cancelled", a, func(cr githubtest.CheckRun) bool { return cr.Conclusion == "cancelled" })
	h.waitCheckRun("the queued check of B in progress", b, queuedInProgress)

	// Closed while queued.
	h.openPR(3, "alice", c, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(3, "alice", c, main, nil))
	h.waitCheckRun("the queued check of C in progress", c, queuedInProgress)
	closed := payload(t, "pull_request/closed.payload.json", prEdits(3, "alice", c, main, map[string]any{"pull_request.state": "closed"}))
	if status, text := h.post("pull_request", "", closed, testSecret); status != http.StatusOK || !strings.Contains(text, "cancelled") {
		t.Fatalf("closed delivery: %d %s", status, text)
	}
	h.waitCheckRun("C's check run cancelled", c, func(cr githubtest.CheckRun) bool { return cr.Conclusion == "cancelled" })

	// The head moves (its delivery not here yet) before the check starts.
	h.openPR(4, "alice", d, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(4, "alice", d, main, nil))
	h.waitCheckRun("the queued check of D in progress", d, queuedInProgress)
	h.gh.PushHead(repoFull, 4, e)
	h.git.SetPull(4, e)

	h.block.unblock()
	h.waitIdle()
	for _, want := range []struct {
		sha, conclusion, summary string
	}{
		{busy, "success", ""},
		{a, "cancelled", "Superseded by job"},
		{b, "success", ""},
		{c, "cancelled", "The pull request was closed."},
		{d, "cancelled", "head moved to " + short(e)},
		{e, "success", ""},
	} {
		runs := h.checkRunsOn(want.sha)
		if len(runs) != 1 {
			t.Errorf("%s: %d check runs, want 1: %+v", h.normalize(want.sha), len(runs), runs)
			continue
		}
		cr := runs[0]
		if cr.Status != "completed" || cr.Conclusion != want.conclusion || !strings.Contains(cr.Output.Summary, want.summary) {
			t.Errorf("%s: check run %s %s %q, want completed %s with %q", h.normalize(want.sha), cr.Status, cr.Conclusion,
				cr.Output.Summary, want.conclusion, want.summary)
		}
	}
}

// A check job that fails for good (the pull request does not exist) closes the check run it announced as
// a failure that says it is not about the change.
func TestAnnouncedCheckRunClosedWhenTheJobFails(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(9, "alice", head, main, nil)) // not on GitHub
	h.waitFor("the job to fail", func() bool {
		jobs, err := h.q.List(context.Background(), 10, queue.Failed)
		return err == nil && len(jobs) == 1
	})
	h.waitCheckRun("the check run closed", head, func(cr githubtest.CheckRun) bool { return cr.Status == "completed" })
	cr := h.checkRunsOn(head)[0]
	if cr.Conclusion != "failure" || cr.Output.Title != "catalogbot could not check this commit" ||
		!strings.Contains(cr.Output.Summary, "/retest") {
		t.Errorf("check run %s %q %q", cr.Conclusion, cr.Output.Title, cr.Output.Summary)
	}
	r, err := h.bot.store.RunOf(context.Background(), 1, kindCheck, 9)
	if err != nil || r == nil || r.Status != store.RunCompleted || r.Conclusion != "failure" {
		t.Errorf("run: %+v, %v", r, err)
	}
}

// The announcer's line: creates go before closes, and a newer job's create takes the place of the
// pending create of the job it superseded, which is never created (its close finds no check run).
func TestAnnouncerCreatesFirstAndReplacesSuperseded(t *testing.T) {
	a := newAnnouncer(nil)
	create := func(job int64, closes ...int64) announcement {
		return announcement{job: job, lease: 100 + job, closeJobs: closes}
	}
	a.send(create(1))    // pull request 1's first push
	a.send(create(2))    // pull request 2
	a.send(create(3, 1)) // pull request 1 pushed again: job 3 supersedes job 1
	a.send(create(4, 2)) // and pull request 2
	a.send(create(5))    // pull request 5
	a.send(announcement{closeJobs: []int64{5}, reason: "closed"})
	var got []string
	for len(a.ready) > 0 {
		<-a.ready
		an, _ := a.next()
		switch {
		case an.lease != 0:
			got = append(got, fmt.Sprintf("create %d", an.job))
		case len(an.closeJobs) > 0:
			got = append(got, fmt.Sprintf("close %v", an.closeJobs))
		}
	}
	want := []string{"create 3", "create 4", "create 5", "close [1]", "close [2]", "close [5]"}
	if !slices.Equal(got, want) {
		t.Errorf("announced %q, want %q", got, want)
	}
}

// Idle workers wait while a create is pending or being sent (queue.Pool.Gate), and go on once the last
// one is done.
func TestWorkersWaitForPendingCreates(t *testing.T) {
	a := newAnnouncer(nil)
	waiting := func() bool {
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // a cancelled wait returns at once: whether idle was closed decides
		a.mu.Lock()
		idle := a.idle
		a.mu.Unlock()
		a.workersWait(ctx)
		select {
		case <-idle:
			return false
		default:
			return true
		}
	}
	if waiting() {
		t.Fatal("workers wait with nothing to announce")
	}
	a.send(announcement{job: 1, lease: 1})
	a.send(announcement{job: 2, lease: 2, closeJobs: []int64{1}}) // takes job 1's place
	a.send(announcement{job: 3, lease: 3})
	for range 2 {
		if !waiting() {
			t.Fatal("workers go on while creates are pending")
		}
		<-a.ready
		_, create := a.next()
		if !create {
			t.Fatal("a close before the creates")
		}
		a.finish(create)
	}
	if waiting() {
		t.Error("workers still wait once every create is done (only a close is pending)")
	}
}
