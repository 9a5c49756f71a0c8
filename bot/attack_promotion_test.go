package bot

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// promotionRules require an approval for every pull request and let the App's always promotions merge
// without one.
var promotionRules = []string{"  requiredApprovals: 1\n", "  autoMerge: true\n"}

// A contributor's pull request that adds a catalog to .catalogbot.yaml promotes nothing: only a push to
// the default branch does (and the pull request itself is judged by the base branch's configuration).
func TestAttackPromotionFromAPullRequest(t *testing.T) {
	h, _ := releaseHarness(t)
	main := promoteMain(t, h, promotionRules...)
	cfg := h.git.Git("show", main+":.catalogbot.yaml") + "\n"
	head := h.label(h.git.Commit("add-v4.22", main, "mallory", "catalogs: add v4.22",
		map[string]string{".catalogbot.yaml": strings.Replace(cfg, "versions: [v4.20, v4.21]", "versions: [v4.20, v4.21, v4.22]", 1)}), "MALLORY")
	h.gh.AddPullRequest(repoFull, githubtest.PullRequest{Number: 7, User: "mallory", HeadSHA: head, BaseSHA: main, HeadRef: "add-v4.22"})
	h.git.SetPull(7, head)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(7, "mallory", head, main, map[string]any{"pull_request.head.ref": "add-v4.22"}))
	// A push to another branch than the default one, with the same commit, promotes nothing either.
	body := payload(t, "push/payload.json", repoEdits(map[string]any{"ref": "refs/heads/add-v4.22", "before": main, "after": head,
		"deleted": false, "created": false, "base_ref": nil, "repository.master_branch": "main"}))
	if status, text := h.post("push", "", body, testSecret); status != http.StatusOK || !strings.Contains(text, "not the default branch") {
		t.Errorf("the push to the pull request's branch: %d %s", status, text)
	}
	h.waitIdleFor(releaseWait)
	if prs := promotionPRs(h); len(prs) != 0 {
		t.Fatalf("a pull request's configuration opened promotions: %+v", prs)
	}
	if rows := promotionRows(t, h); len(rows) != 0 {
		t.Errorf("promotions recorded: %+v", rows)
	}
	h.requireNotMerged(7, "a contributor's configuration change merged")
}

// A pull request that looks like the App's always promotion gets nothing the App's own promotion gets:
// one from a contributor's branch of the same name with the same title and the same change, and one
// authored by the App's login on that branch that the App never recorded opening, are judged by the
// owners rules and need the approval. Same configuration (promotion.autoMerge, one approval required).
func TestAttackPromotionLookalikePullRequests(t *testing.T) {
	for _, author := range []string{"mallory", "catalogbot[bot]"} {
		t.Run(author, func(t *testing.T) {
			h, _ := releaseHarness(t)
			main := promoteMain(t, h, promotionRules...)
			// main lists v4.22 (its push was not delivered: the App promoted nothing), then the look-alike.
			after := addCatalog(t, h, main, nil)
			ci := "operators/" + promoteAlways + "/ci.yaml"
			cat := "catalogs/v4.22/" + promoteAlways + "/catalog.yaml"
			catalog, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "fbc-templates"), filepath.FromSlash(cat)))
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{ci: strings.Replace(promoteCI[promoteAlways], "        - v4.21\n", "        - v4.21\n        - v4.22\n", 1), cat: string(catalog)}
			branch, title := "catalogbot/promote/"+promoteAlways+"-v4.22", "Promote operator "+promoteAlways+" to catalog version 4.22."
			head := h.label(h.git.Commit(branch, after, author, title, files), "LOOKALIKE")
			h.gh.AddPullRequest(repoFull, githubtest.PullRequest{Number: 7, User: author, HeadSHA: head, BaseSHA: after, HeadRef: branch, Title: title})
			h.git.SetPull(7, head)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(7, author, head, after,
				map[string]any{"pull_request.head.ref": branch, "pull_request.title": title}))
			h.waitIdleFor(releaseWait)
			h.requireNotMerged(7, "a look-alike of the App's promotion merged")
			runs := h.gh.CheckRuns(repoFull)
			if len(runs) != 1 || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Output.Summary, "may not change") {
				t.Fatalf("check runs: %+v", runs)
			}
			if c := h.readiness(7); strings.Contains(c, "no approval needed") || !strings.Contains(c, "approval") {
				t.Errorf("readiness comment:\n%s", c)
			}
		})
	}
}

// A push that adds the catalog and, in the same commit, changes packages' strategies promotes as the
// pushed commit's files say, every one of them read there (the configuration's catalogs and each
// ci.yaml): the package switched to never gets no pull request, the one switched from review-needed to
// always gets one labelled always that merges under promotion.autoMerge. The push's commit is the
// default branch's tip, what the maintainers merged; the before commit's strategies are what they
// replaced.
func TestAttackPromotionPushChangesStrategies(t *testing.T) {
	h, _ := releaseHarness(t)
	main := promoteMain(t, h, promotionRules...)
	flip := func(pkg, from, to string) string {
		ci := promoteCI[pkg]
		out := strings.Replace(ci, "version_promotion_strategy: "+from, "version_promotion_strategy: "+to, 1)
		if out == ci {
			t.Fatalf("%s's ci.yaml says no %s", pkg, from)
		}
		return out
	}
	after := addCatalog(t, h, main, map[string]string{
		"operators/" + promoteAlways + "/ci.yaml": flip(promoteAlways, "always", "never"),
		"operators/" + promoteReview + "/ci.yaml": flip(promoteReview, "review-needed", "always"),
	})
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitIdleFor(releaseWait)
	pr := promotedOnce(t, h, promoteReview)[promoteReview]
	if labels := h.gh.PullRequest(repoFull, pr.Number).Labels; len(labels) != 1 || labels[0] != "catalog-promotion/always" {
		t.Errorf("labels %v", labels)
	}
	if merged, at := h.gh.Merged(repoFull, pr.Number); !merged || at != pr.HeadSHA {
		t.Fatalf("the promotion of the package switched to always did not merge; readiness:\n%s\n%s", h.readiness(pr.Number), h.logs.String())
	}
	if r := promotionRows(t, h)[promoteReview]; r.Strategy != "always" {
		t.Errorf("recorded strategy %q", r.Strategy)
	}
}

// A push to the App's always promotion branch (by someone who may push there) makes it an ordinary pull
// request: promotion.autoMerge no longer waives the approval, and the owners rules judge it. A required
// label holds the App's promotion until then.
func TestAttackPushToPromotionBranch(t *testing.T) {
	h, _ := releaseHarness(t)
	main := promoteMain(t, h, "  requiredApprovals: 1\n  requiredLabels: [ok-to-merge]\n", "  autoMerge: true\n")
	after := addCatalog(t, h, main, nil)
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitIdleFor(releaseWait)
	pr := promotedOnce(t, h, promoteAlways, promoteReview)[promoteAlways]
	h.requireNotMerged(pr.Number, "merged without the required label")
	if c := h.readiness(pr.Number); !strings.Contains(c, "- [x] no approval needed: the App's promotion of `kepler-operator`") ||
		!strings.Contains(c, "- [ ] label `ok-to-merge` is required") {
		t.Errorf("the App's promotion's readiness comment before the push:\n%s", c)
	}
	// mallory makes herself a reviewer of the package: a change of the package's ci.yaml only, which the
	// promotion's paths allow; what takes the grant away is that the head is no longer the App's commit.
	ci := "operators/" + promoteAlways + "/ci.yaml"
	body := h.git.Git("show", pr.HeadSHA+":"+ci) + "\n"
	branch := "catalogbot/promote/" + promoteAlways + "-v4.22"
	head := h.label(h.git.Commit(branch, pr.HeadSHA, "mallory", "tweak", map[string]string{ci: body + "  - mallory\n"}), "PUSHED")
	h.push(pr.Number, pr.User, head, after)
	h.waitIdleFor(releaseWait)
	h.gh.AddLabel(repoFull, pr.Number, "ok-to-merge")
	h.deliver("pull_request", "pull_request/labeled.payload.json", prEdits(pr.Number, "catalog-admin", head, after,
		map[string]any{"label.name": "ok-to-merge", "sender.login": "catalog-admin"}))
	h.waitIdleFor(releaseWait)
	h.requireNotMerged(pr.Number, "the promotion branch pushed to by someone else merged as the App's promotion")
	if c := h.readiness(pr.Number); strings.Contains(c, "no approval needed") {
		t.Errorf("the readiness comment still waives the approval:\n%s", c)
	}
	runs := h.gh.CheckRuns(repoFull)
	if last := runs[len(runs)-1]; last.HeadSHA != head || last.Conclusion != "failure" || !strings.Contains(last.Output.Summary, "may not change") {
		t.Errorf("the check of the pushed head: %s", checkRunsOf(h, head))
	}
}
