package bot

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// releaseRowOf reads the release of kube-green 0.7.2 from the bot's store (nil before there is one).
func releaseRowOf(t *testing.T, h *harness) *store.Release {
	t.Helper()
	r, err := h.bot.store.Release(context.Background(), repoFull, releaseDir)
	if err != nil {
		return nil
	}
	return r
}

// releasedOnce requires the outcome every reliability test wants: one release pull request, recorded as
// opened with no error, checked once on its head, and the bundle image pushed once in tries attempts.
func releasedOnce(t *testing.T, h *harness, p *fakePusher, tries int) githubtest.PullRequest {
	t.Helper()
	pr := oneReleasePR(t, h)
	if n, pushed := p.counts(); n != tries || pushed != 1 {
		t.Errorf("bundle image pushed %d times in %d tries, want once in %d", pushed, n, tries)
	}
	if r := releaseRowOf(t, h); r == nil || r.State != store.AppPROpened || r.PR != pr.Number || r.Commit != pr.HeadSHA || r.Error != "" {
		t.Errorf("release record: %+v", r)
	}
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].HeadSHA != pr.HeadSHA {
		t.Errorf("check runs: %+v", runs)
	}
	return pr
}

// A redelivered push (the same delivery, or the same push under a new delivery ID), and a release job of
// the same bundle run again after the release, open one pull request and push the image once.
func TestReleaseRedeliveredPushOpensOnePR(t *testing.T) {
	h, p := releaseHarness(t)
	main := releaseMain(t, h)
	bundle := mergeBundle(t, h, main)
	body := payload(t, "push/payload.json", pushEdits(main, bundle))
	const delivery = "5d1e7b2a-0000-4000-8000-000000000035"
	if status, text := h.post("push", delivery, body, testSecret); status != http.StatusAccepted {
		t.Fatalf("push: %d %s", status, text)
	}
	h.waitIdleFor(releaseWait)
	oneReleasePR(t, h)
	if status, text := h.post("push", delivery, body, testSecret); status != http.StatusOK || !strings.Contains(text, "duplicate") {
		t.Errorf("redelivery: %d %s", status, text)
	}
	if status, text := h.post("push", "", body, testSecret); status != http.StatusAccepted {
		t.Errorf("the push again under another delivery ID: %d %s", status, text)
	}
	h.waitIdleFor(releaseWait)
	// A release job of the same bundle that escaped the queue's deduplication finds the release opened.
	j, err := releaseJob("push", PushTask{Target: Target{Installation: installationID, Repo: repoFull}, DefaultBranch: "main", Before: main, After: bundle}, releaseDir)
	if err != nil {
		t.Fatal(err)
	}
	j.Delivery += "/again"
	if res, err := h.bot.enqueue(context.Background(), j, Target{Repo: repoFull}, ""); err != nil || res.Duplicate {
		t.Fatalf("enqueue the release again: %+v %v", res, err)
	}
	h.waitIdleFor(releaseWait)
	releasedOnce(t, h, p, 1)
	if r := releaseRowOf(t, h); r.Attempts != 2 {
		t.Errorf("release jobs run: %d, want 2", r.Attempts)
	}
}

// A bot stopped between the steps of a release (the image pushed and the release commit computed, the
// branch not pushed; or the branch pushed, the pull request not opened) resumes after a restart: the image
// is not pushed again, the branch is not rewritten, and one pull request is opened.
func TestReleaseRestartBetweenSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, h *harness)
	}{
		{"image pushed, branch not", refuseFirstBranchPush},
		{"branch pushed, pull request not opened", failPullRequestCreates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := releaseHarness(t)
			main := releaseMain(t, h)
			bundle := mergeBundle(t, h, main)
			tc.setup(t, h)
			h.deliver("push", "push/payload.json", pushEdits(main, bundle))
			h.waitForWithin(releaseWait, "a failed release attempt", func() bool {
				r := releaseRowOf(t, h)
				return r != nil && r.Error != "" && r.Commit != ""
			})
			if r := releaseRowOf(t, h); r.State != store.AppPRPending || r.Image == "" || r.PR != 0 {
				t.Fatalf("release record after the failed attempt: %+v", r)
			}
			h.shutdown()
			h.start()
			h.waitIdleFor(releaseWait)
			releasedOnce(t, h, p, 1)
		})
	}
}

// A registry answering 5xx to the bundle image push delays the release; the retry pushes it and opens one
// pull request.
func TestReleaseRegistry5xxRetried(t *testing.T) {
	h, p := releaseHarness(t)
	p.fail = 1
	main := releaseMain(t, h)
	bundle := mergeBundle(t, h, main)
	h.deliver("push", "push/payload.json", pushEdits(main, bundle))
	h.waitIdleFor(releaseWait)
	releasedOnce(t, h, p, 2)
	if r := releaseRowOf(t, h); r.Attempts != 2 {
		t.Errorf("release attempts: %d, want 2", r.Attempts)
	}
}

// A registry that keeps answering 5xx fails the release once queue.maxAttempts are used: no pull request,
// and the status page shows the release failed with the registry's error.
func TestReleaseRegistryDownShownOnStatusPage(t *testing.T) {
	h, p := releaseHarness(t)
	p.fail = 100
	main := releaseMain(t, h)
	bundle := mergeBundle(t, h, main)
	h.deliver("push", "push/payload.json", pushEdits(main, bundle))
	h.waitForWithin(releaseWait, "the release to fail", func() bool {
		r := releaseRowOf(t, h)
		return r != nil && r.State == store.AppPRFailed
	})
	r := releaseRowOf(t, h)
	if !strings.Contains(r.Error, "pushing bundle image "+h.reg.Host+"/pipeline/kube-green:0.7.2") || !strings.Contains(r.Error, "UNAVAILABLE") ||
		r.Attempts != h.cfg.Queue.MaxAttempts {
		t.Errorf("release record: %+v", r)
	}
	if prs := releasePRs(h); len(prs) != 0 {
		t.Errorf("pull requests: %+v", prs)
	}
	page := h.get("/")
	if !strings.Contains(page, "<code>operators/kube-green/0.7.2</code>") || !strings.Contains(page, `class="release-failed"`) ||
		!strings.Contains(page, "pushing bundle image") {
		t.Errorf("the status page does not show the failed release:\n%s", page)
	}
	// The job records its release failed before the queue records the job failed: wait for the queue too.
	h.waitForWithin(releaseWait, "the release job to fail", func() bool {
		failed, _ := h.q.List(context.Background(), 10, queue.Failed)
		return len(failed) == 1 && failed[0].Kind == kindRelease
	})
}

// GitHub failing while the release opens its pull request leaves exactly one: a create GitHub applied but
// answered 502 for is found by its branch, refused creates are retried, and a failing look-up is retried.
func TestReleaseGitHub5xxOpensOnePR(t *testing.T) {
	applied := githubtest.Fault{Applied: true, Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`}
	for _, tc := range []struct {
		name  string
		fault func(s *githubtest.Server)
	}{
		{"create applied then 502", func(s *githubtest.Server) { s.InjectFault(http.MethodPost, "/repos/octo/catalog/pulls", 1, applied) }},
		{"create applied, connection dropped", func(s *githubtest.Server) {
			s.InjectFault(http.MethodPost, "/repos/octo/catalog/pulls", 1, githubtest.Fault{Applied: true, Drop: true})
		}},
		{"create refused by 503s", func(s *githubtest.Server) {
			s.FailNext(http.MethodPost, "/repos/octo/catalog/pulls", http.StatusServiceUnavailable, 6)
		}},
		{"pull request look-up 500s", func(s *githubtest.Server) {
			s.FailNext(http.MethodGet, "/repos/octo/catalog/pulls", http.StatusInternalServerError, 6)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := releaseHarness(t)
			main := releaseMain(t, h)
			bundle := mergeBundle(t, h, main)
			tc.fault(h.gh)
			h.deliver("push", "push/payload.json", pushEdits(main, bundle))
			h.waitIdleFor(releaseWait)
			releasedOnce(t, h, p, 1)
		})
	}
}

// refuseFirstBranchPush makes the test's remote refuse the first push of a branch (its hook deletes its
// flag): a job stops after computing its commit, before its branch is pushed.
func refuseFirstBranchPush(t *testing.T, h *harness) {
	flag := filepath.Join(t.TempDir(), "refuse")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	hook := "#!/bin/sh\nif [ -e '" + flag + "' ]; then rm '" + flag + "'; echo refused >&2; exit 1; fi\n"
	if err := os.WriteFile(filepath.Join(h.git.Dir, ".git", "hooks", "pre-receive"), []byte(hook), 0o755); err != nil {
		t.Fatal(err)
	}
}

// failPullRequestCreates makes GitHub refuse the next pull request create of a job's every try (the
// client's 1 + 3): the job stops after pushing its branch, before its pull request is opened.
func failPullRequestCreates(t *testing.T, h *harness) {
	h.gh.FailNext(http.MethodPost, "/repos/octo/catalog/pulls", http.StatusServiceUnavailable, 4)
}
