package bot

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// The merge gate, round three (issue 22 items 1-3): a hostile contributor against the real handler,
// GitHub's real payloads and the OpenAPI-checked fake GitHub. Each must fail.

// retarget edits pull request n's base from one branch to another on GitHub and delivers the edited event
// (changes.base), as GitHub does when its author picks another base.
func (h *harness) retarget(n int, author, head, from, to string) {
	h.t.Helper()
	h.gh.SetBase(repoFull, n, to)
	base := h.gh.PullRequest(repoFull, n).BaseSHA
	// Whatever the answer (a bot that does not handle it answers 200): what counts is what merges.
	h.post("pull_request", "", payload(h.t, "pull_request/opened.payload.json", prEdits(n, author, head, base, map[string]any{
		"action": "edited", "pull_request.base.ref": to, "changes.base.ref.from": from, "changes.base.sha.from": "",
	})), testSecret)
}

// appRemovesLabel takes a label off through GitHub's API as an app (a labeler workflow, say) and delivers
// the event GitHub sends: its sender is the app (type Bot, login ending in [bot]).
func (h *harness) appRemovesLabel(n int, app, label, author, head, base string) {
	h.t.Helper()
	api := h.gh.URL + "/"
	c, err := github.NewClient(github.WithURLs(&api, &api), github.WithAuthToken("ghs_app"))
	if err != nil {
		h.t.Fatal(err)
	}
	req, err := c.NewRequest(context.Background(), "DELETE", fmt.Sprintf("repos/octo/catalog/issues/%d/labels/%s", n, url.PathEscape(label)), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := c.Do(req, nil); err != nil {
		h.t.Fatal(err)
	}
	h.deliver("pull_request", "pull_request/unlabeled.payload.json", prEdits(n, author, head, base,
		map[string]any{"label.name": label, "sender.login": app, "sender.type": "Bot"}))
}

// Mallory owns nothing. She opens a pull request against release-0.1, a branch cut before
// .catalogbot.yaml existed (no rules apply there), holds it herself, and the check passes. She then edits
// its base to main, where foo has an owner and one approval is required, and lifts her hold. The check of
// release-0.1 does not count for main: the checks run again against main's rules and fail, nothing merges,
// and the readiness comment names main.
func TestAttackRetargetAfterCheck(t *testing.T) {
	h := newHarness(t)
	rel := h.git.Commit("release-0.1", "", "catalog-admin", "release 0.1",
		h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0"}, "bar-operator": {"0.1.0"}}))
	h.gh.SetRef(repoFull, "heads/release-0.1", rel)
	main := h.git.Commit("main", rel, "catalog-admin", "rules", map[string]string{".catalogbot.yaml": repoConfig + "  requiredApprovals: 1\n"})
	h.gh.SetRef(repoFull, "heads/main", main)
	head := h.releaseFoo("mallory/foo", rel, "mallory")
	h.gh.AddPullRequest(repoFull, githubtest.PullRequest{Number: 30, User: "mallory", HeadSHA: head, HeadRef: "mallory/foo",
		BaseRef: "release-0.1", BaseSHA: rel, Title: "foo v0.2.0"})
	h.git.SetPull(30, head)
	h.comment(30, "mallory", "/hold") // before the check: it would merge at once
	h.waitIdle()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(30, "mallory", head, rel, map[string]any{"pull_request.base.ref": "release-0.1"}))
	h.waitIdle()
	if cr := h.lastCheckRun(); cr.Conclusion != "success" {
		t.Fatalf("the check against release-0.1: %s %s", cr.Conclusion, cr.Output.Summary)
	}
	h.requireNotMerged(30, "merged while on hold")
	h.retarget(30, "mallory", head, "release-0.1", "main")
	h.waitIdle()
	h.comment(30, "mallory", "/unhold")
	h.waitIdle()
	h.requireNotMerged(30, "a check of release-0.1 merged the pull request into main")
	runs := h.gh.CheckRuns(repoFull)
	if last := runs[len(runs)-1]; len(runs) < 2 || last.Conclusion != "failure" || !strings.Contains(last.Output.Summary, "mallory may not change") {
		t.Fatalf("want a re-check against main's rules that fails: %+v", runs)
	}
	body := h.readiness(30)
	if !strings.Contains(body, "did not pass on "+short(head)+" against `main`") || strings.Contains(body, "release-0.1") || strings.Contains(body, "Merged") {
		t.Errorf("the readiness comment does not describe main:\n%s", body)
	}
}

// A maintainer approves with /approve and withdraws with /approve cancel; then writes /approve with an
// argument the bot does not know. Neither counts: the first is withdrawn, the second refused with a reply.
// A plain /approve afterwards merges it.
func TestAttackApproveCancelIsNotApproval(t *testing.T) {
	h := newHarness(t)
	main, head := h.aliceReleasesFoo(31, repoConfig+"  requiredLabels: [lgtm]\n  requiredApprovals: 1\n")
	h.comment(31, "catalog-admin", "/approve")
	h.waitIdle()
	h.comment(31, "catalog-admin", "/approve cancel")
	h.waitIdle()
	h.comment(31, "catalog-admin", "/approve later")
	h.waitIdle()
	h.addLabel(31, "lgtm", head, main)
	h.waitIdle()
	h.requireNotMerged(31, "/approve cancel or /approve with an unknown argument counted as an approval")
	if got := reactions(h, 31); got != "[/approve:+1 /approve cancel:+1 /approve later:-1]" {
		t.Errorf("reactions %s", got)
	}
	var replied bool
	for _, c := range h.gh.Comments(repoFull, 31) {
		replied = replied || strings.Contains(c.Body, "`/approve later`: unknown argument")
	}
	if !replied {
		t.Error("no reply refuses /approve with an unknown argument")
	}
	if body := h.readiness(31); !strings.Contains(body, "0 of 1 required approvals") || !strings.Contains(body, "Approvals withdrawn") {
		t.Errorf("readiness comment:\n%s", body)
	}
	h.comment(31, "catalog-admin", "/approve")
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 31); !merged || at != head {
		t.Errorf("after the maintainer approved again: merged %v at %s", merged, at)
	}
}

// A maintainer's /approve is followed by the same maintainer's review requesting changes: as in Prow, the
// later review withdraws the approval. A dismissed review withdraws it too. Approving again merges it.
func TestAttackChangesRequestedAfterApprove(t *testing.T) {
	for _, state := range []string{"CHANGES_REQUESTED", "DISMISSED"} {
		t.Run(strings.ToLower(state), func(t *testing.T) {
			h := newHarness(t)
			main, head := h.aliceReleasesFoo(32, repoConfig+"  requiredLabels: [lgtm]\n  requiredApprovals: 1\n")
			h.comment(32, "catalog-admin", "/approve")
			h.waitIdle()
			if state == "DISMISSED" {
				h.gh.AddReview(repoFull, 32, githubtest.Review{User: "catalog-admin", State: "DISMISSED", CommitID: head})
				h.deliver("pull_request_review", "pull_request_review/dismissed.payload.json", prEdits(32, "alice", head, main,
					map[string]any{"review.state": "dismissed", "review.user.login": "catalog-admin", "review.commit_id": head, "sender.login": "catalog-admin"}))
			} else {
				h.review(32, "alice", head, main, "catalog-admin", state, head)
			}
			h.waitIdle()
			h.addLabel(32, "lgtm", head, main)
			h.waitIdle()
			h.requireNotMerged(32, "an /approve counted after its giver's later "+state+" review")
			h.review(32, "alice", head, main, "catalog-admin", "APPROVED", head)
			h.waitIdle()
			if merged, at := h.gh.Merged(repoFull, 32); !merged || at != head {
				t.Errorf("after the maintainer approved again: merged %v at %s", merged, at)
			}
		})
	}
}

// A maintainer holds the pull request; an app the author can trigger (a labeler workflow) takes the hold
// label off. Only catalogbot's own removals are exempt: the hold is put back and nothing merges. The
// maintainer's /unhold lifts it, and the removal catalogbot then hears of (its own) is not undone.
func TestAttackHoldLiftedByOtherApp(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "catalog-admin", "maintain")
	main, head := h.aliceReleasesFoo(33, repoConfig+"  requiredLabels: [lgtm]\n")
	h.comment(33, "catalog-admin", "/hold")
	h.waitIdle()
	h.addLabel(33, "lgtm", head, main)
	h.waitIdle()
	held := func() bool { return slices.Contains(h.gh.PullRequest(repoFull, 33).Labels, "do-not-merge/hold") }
	h.appRemovesLabel(33, "labeler[bot]", "do-not-merge/hold", "alice", head, main)
	h.waitIdle()
	h.requireNotMerged(33, "an app lifted a maintainer's hold")
	if !held() {
		t.Fatal("the hold label the app removed was not put back")
	}
	// The maintainer lifts it; catalogbot's own removal is delivered (as GitHub would) while lgtm is off.
	h.removeLabel(33, "catalog-admin", "lgtm", head, main)
	h.waitIdle()
	h.comment(33, "catalog-admin", "/unhold")
	h.waitIdle()
	h.deliver("pull_request", "pull_request/unlabeled.payload.json", prEdits(33, "alice", head, main,
		map[string]any{"label.name": "do-not-merge/hold", "sender.login": "catalogbot[bot]", "sender.type": "Bot"}))
	h.waitIdle()
	if held() {
		t.Fatal("catalogbot undid its own removal of the hold label")
	}
	h.addLabel(33, "lgtm", head, main)
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 33); !merged || at != head {
		t.Errorf("after the maintainer's /unhold: merged %v at %s", merged, at)
	}
}

// An argument in inline markup is still the argument: a maintainer's "/approve ~~later~~" or "/approve
// www.example.com" reads "/approve later" to anyone looking at the rendered comment, so it is refused like
// "/approve later", never counted as a plain /approve (goldmark put the argument in a strikethrough or
// link node, and the command was read without it).
func TestAttackApproveArgumentInMarkupIsNotApproval(t *testing.T) {
	h := newHarness(t)
	main, head := h.aliceReleasesFoo(32, repoConfig+"  requiredLabels: [lgtm]\n  requiredApprovals: 1\n")
	for _, body := range []string{"/approve ~~later~~", "/approve www.example.com", "/approve <b>later</b>"} {
		h.comment(32, "catalog-admin", body)
		h.waitIdle()
	}
	h.addLabel(32, "lgtm", head, main)
	h.waitIdle()
	h.requireNotMerged(32, "/approve with an argument in markup counted as an approval")
	refusals := 0
	for _, c := range h.gh.Comments(repoFull, 32) {
		for _, arg := range []string{"`/approve later`: unknown argument", "`/approve www.example.com`: unknown argument"} {
			if strings.Contains(c.Body, arg) {
				refusals++
			}
		}
	}
	if refusals < 2 {
		t.Errorf("want the markup arguments refused by name, found %d refusals", refusals)
	}
}
