package bot

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// promotionRows are the bot's promotion records, by package directory.
func promotionRows(t *testing.T, h *harness) map[string]*store.Promotion {
	t.Helper()
	rows, err := h.bot.store.RecentPromotions(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*store.Promotion{}
	for _, r := range rows {
		out[r.Dir] = r
	}
	return out
}

// A redelivered push (the same delivery, or the same push under a new delivery ID), and a promotion job
// of the same package run again after the promotion, open one pull request per package; on SQLite and on
// PostgreSQL (the promotions table's statements).
func TestPromotionRedeliveredPushOpensOnePRPerPackage(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { redeliverPromotionPush(t) })
	t.Run("postgres", func(t *testing.T) { redeliverPromotionPush(t, withPostgres) })
}

func redeliverPromotionPush(t *testing.T, opts ...harnessOption) {
	h, _ := releaseHarness(t, opts...)
	main := promoteMain(t, h)
	after := addCatalog(t, h, main, nil)
	body := payload(t, "push/payload.json", pushEdits(main, after))
	const delivery = "5d1e7b2a-0000-4000-8000-000000000036"
	if status, text := h.post("push", delivery, body, testSecret); status != http.StatusAccepted {
		t.Fatalf("push: %d %s", status, text)
	}
	h.waitIdleFor(releaseWait)
	promotedOnce(t, h, promoteAlways, promoteReview)
	if status, text := h.post("push", delivery, body, testSecret); status != http.StatusOK || !strings.Contains(text, "duplicate") {
		t.Errorf("redelivery: %d %s", status, text)
	}
	if status, text := h.post("push", "", body, testSecret); status != http.StatusAccepted {
		t.Errorf("the push again under another delivery ID: %d %s", status, text)
	}
	h.waitIdleFor(releaseWait)
	// A promotion job of the same package that escaped the queue's deduplication finds it opened.
	j, err := promotionJob("push", PushTask{Target: Target{Installation: installationID, Repo: repoFull}, DefaultBranch: "main", Before: main, After: after}, promoteTo, promoteAlways)
	if err != nil {
		t.Fatal(err)
	}
	j.Delivery += "/again"
	if res, err := h.bot.enqueue(context.Background(), j, Target{Repo: repoFull}, ""); err != nil || res.Duplicate {
		t.Fatalf("enqueue the promotion again: %+v %v", res, err)
	}
	h.waitIdleFor(releaseWait)
	promotedOnce(t, h, promoteAlways, promoteReview)
	if r := promotionRows(t, h)[promoteAlways]; r.Attempts != 2 {
		t.Errorf("promotion jobs of %s run: %d, want 2", promoteAlways, r.Attempts)
	}
}

// A bot stopped between the steps of a promotion (the commit computed, the branch not pushed; or the
// branch pushed, the pull request not opened) resumes after a restart: the branch is not rewritten, and
// one pull request per package is opened.
func TestPromotionRestartBetweenSteps(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, h *harness)
	}{
		{"branch not pushed", refuseFirstBranchPush},
		{"branch pushed, pull request not opened", failPullRequestCreates},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := releaseHarness(t)
			main := promoteMain(t, h)
			after := addCatalog(t, h, main, nil)
			tc.setup(t, h)
			h.deliver("push", "push/payload.json", pushEdits(main, after))
			h.waitForWithin(releaseWait, "a failed promotion attempt", func() bool {
				for _, r := range promotionRows(t, h) {
					if r.Error != "" && r.Commit != "" {
						return true
					}
				}
				return false
			})
			h.shutdown()
			h.start()
			h.waitIdleFor(releaseWait)
			promotedOnce(t, h, promoteAlways, promoteReview)
		})
	}
}

// GitHub failing while a promotion opens its pull request leaves exactly one per package: a create
// GitHub applied but answered 502 for is found by its branch, and a failing look-up is retried.
func TestPromotionGitHub5xxOpensOnePRPerPackage(t *testing.T) {
	applied := githubtest.Fault{Applied: true, Status: http.StatusBadGateway, Body: `{"message":"Bad Gateway"}`}
	for _, tc := range []struct {
		name  string
		fault func(s *githubtest.Server)
	}{
		{"create applied then 502", func(s *githubtest.Server) { s.InjectFault(http.MethodPost, "/repos/octo/catalog/pulls", 2, applied) }},
		{"pull request look-up 500s", func(s *githubtest.Server) {
			s.FailNext(http.MethodGet, "/repos/octo/catalog/pulls", http.StatusInternalServerError, 6)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := releaseHarness(t)
			main := promoteMain(t, h)
			after := addCatalog(t, h, main, nil)
			tc.fault(h.gh)
			h.deliver("push", "push/payload.json", pushEdits(main, after))
			h.waitIdleFor(releaseWait)
			promotedOnce(t, h, promoteAlways, promoteReview)
		})
	}
}

// GitHub refusing every pull request fails the promotions once queue.maxAttempts are used: no pull
// request, and the status page shows each promotion failed with GitHub's error.
func TestPromotionGitHubDownShownOnStatusPage(t *testing.T) {
	h, _ := releaseHarness(t)
	main := promoteMain(t, h)
	after := addCatalog(t, h, main, nil)
	h.gh.FailNext(http.MethodPost, "/repos/octo/catalog/pulls", http.StatusServiceUnavailable, 1000)
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitForWithin(releaseWait, "the promotions to fail", func() bool {
		rows := promotionRows(t, h)
		return len(rows) == 2 && rows[promoteAlways].State == store.AppPRFailed && rows[promoteReview].State == store.AppPRFailed
	})
	for dir, r := range promotionRows(t, h) {
		if !strings.Contains(r.Error, "503") || r.Attempts != h.cfg.Queue.MaxAttempts || r.PR != 0 || r.Commit == "" {
			t.Errorf("promotion record of %s: %+v", dir, r)
		}
	}
	if prs := promotionPRs(h); len(prs) != 0 {
		t.Errorf("pull requests: %+v", prs)
	}
	page := h.get("/")
	if !strings.Contains(page, "<code>kepler-operator</code>") || !strings.Contains(page, `class="promotion-failed"`) {
		t.Errorf("the status page does not show the failed promotions:\n%s", page)
	}
	h.waitForWithin(releaseWait, "both promotion jobs to fail", func() bool {
		failed, _ := h.q.List(context.Background(), 10, queue.Failed)
		return len(failed) == 2 && failed[0].Kind == kindPromotion && failed[1].Kind == kindPromotion
	})
}
