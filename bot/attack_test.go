package bot

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// Authorization attacks (issue 12, items 1-4): a hostile contributor against the real handler, GitHub's
// real payloads and the OpenAPI-checked fake GitHub. Each must fail.

// readiness is the bot's readiness comment on pull request n ("" when none).
func (h *harness) readiness(n int) string {
	for _, c := range h.gh.Comments(repoFull, n) {
		if strings.HasPrefix(c.Body, readinessMarker) {
			return c.Body
		}
	}
	return ""
}

// review seeds a review of pull request n on commit and delivers its event.
func (h *harness) review(n int, author, head, base, user, state, commit string) {
	h.t.Helper()
	h.gh.AddReview(repoFull, n, githubtest.Review{User: user, State: state, CommitID: commit})
	h.deliver("pull_request_review", "pull_request_review/submitted.payload.json", prEdits(n, author, head, base,
		map[string]any{"review.state": strings.ToLower(state), "review.user.login": user, "review.commit_id": commit, "sender.login": user}))
}

// push moves pull request n's head to sha and delivers the synchronize event.
func (h *harness) push(n int, author, sha, base string) {
	h.t.Helper()
	h.gh.PushHead(repoFull, n, sha)
	h.git.SetPull(n, sha)
	h.deliver("pull_request", "pull_request/synchronize.payload.json", prEdits(n, author, sha, base, nil))
}

// moveMain commits files on main as a maintainer and points GitHub's main at it.
func (h *harness) moveMain(msg string, files map[string]string) string {
	h.t.Helper()
	sha := h.git.Commit("main", "", "catalog-admin", msg, files)
	h.gh.SetRef(repoFull, "heads/main", sha)
	return sha
}

func (h *harness) requireNotMerged(n int, why string) {
	h.t.Helper()
	if merged, _ := h.gh.Merged(repoFull, n); merged {
		h.t.Fatalf("merged: %s", why)
	}
}

func (h *harness) lastCheckRun() githubtest.CheckRun {
	h.t.Helper()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) == 0 {
		h.t.Fatal("no check run")
	}
	return runs[len(runs)-1]
}

// alice is removed as foo's owner on main; she branches from the commit before, changes foo and opens a
// pull request. The owners come from main's tip, not the merge base she picked: the owners stage fails.
func TestAttackStaleOwnersThroughMergeBase(t *testing.T) {
	h := newHarness(t)
	old := h.seedMain(repoConfig)
	tip := h.moveMain("alice no longer owns foo", map[string]string{".catalogbot.yaml": strings.Replace(repoConfig,
		"foo-operator: [alice]", "foo-operator: [carol]", 1)})
	head := h.releaseFoo("alice/foo", old, "alice") // branched from before the removal
	h.openPR(20, "alice", head, tip)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(20, "alice", head, tip, nil))
	h.waitIdle()
	h.requireNotMerged(20, "a removed owner changed the package through an old merge base")
	cr := h.lastCheckRun()
	if cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary, "alice may not change") {
		t.Errorf("check run %s: %s", cr.Conclusion, cr.Output.Summary)
	}
}

// The owners change on main after the check passed: before merging, the checks run again against the new
// tip's owners, and the pull request is not merged.
func TestAttackOwnerRemovedAfterCheck(t *testing.T) {
	h := newHarness(t)
	main, head := h.aliceReleasesFoo(21, repoConfig+"  requiredLabels: [lgtm]\n")
	if cr := h.lastCheckRun(); cr.Conclusion != "success" {
		t.Fatalf("first check: %s", cr.Conclusion)
	}
	h.moveMain("alice no longer owns foo", map[string]string{".catalogbot.yaml": strings.Replace(repoConfig+"  requiredLabels: [lgtm]\n",
		"foo-operator: [alice]", "foo-operator: [carol]", 1)})
	h.addLabel(21, "lgtm", head, main)
	h.waitIdle()
	h.requireNotMerged(21, "the owners changed on the base after the check")
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 2 || runs[1].Conclusion != "failure" {
		t.Fatalf("check runs: want the passed check and a failed re-check: %+v", runs)
	}
	if !strings.Contains(runs[1].Output.Summary, "alice may not change") {
		t.Errorf("the re-check did not apply the tip's owners: %s", runs[1].Output.Summary)
	}
}

// A maintainer approves head 1 with /approve; the author pushes head 2 (which could change anything: the
// head's configuration, other packages). The approval does not count on head 2, and the readiness comment
// says so; nor does a review of head 1 given after the push. Approving head 2 merges it.
func TestAttackApprovalOnOldHead(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "catalog-admin", "maintain")
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n  requiredApprovals: 1\n")
	head1 := h.releaseFoo("alice/foo", main, "alice")
	h.openPR(22, "alice", head1, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(22, "alice", head1, main, nil))
	h.waitIdle()
	h.comment(22, "catalog-admin", "/approve")
	h.waitIdle()
	head2 := h.git.Commit("alice/foo", "", "alice", "describe foo", h.describedFoo())
	h.push(22, "alice", head2, main)
	h.waitIdle()
	h.addLabel(22, "lgtm", head2, main)
	h.waitIdle()
	h.requireNotMerged(22, "an /approve of an earlier head counted")
	body := h.readiness(22)
	for _, want := range []string{"0 of 1 required approvals", "Approvals given on an earlier head no longer count (a push drops them): catalog-admin (on " + short(head1) + ")"} {
		if !strings.Contains(body, want) {
			t.Errorf("readiness comment lacks %q:\n%s", want, body)
		}
	}
	h.review(22, "alice", head2, main, "catalog-admin", "APPROVED", head1)
	h.waitIdle()
	h.requireNotMerged(22, "a review of the old head counted")
	h.comment(22, "bob", "/approve") // bob owns bar only
	h.waitIdle()
	h.requireNotMerged(22, "an owner of another package approved")
	if got := reactions(h, 22); got != "[/approve:+1 /approve:-1]" {
		t.Errorf("reactions %s", got)
	}
	h.review(22, "alice", head2, main, "catalog-admin", "APPROVED", head2)
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 22); !merged || at != head2 {
		t.Errorf("after the maintainer approved head 2: merged %v at %s", merged, at)
	}
}

// A maintainer writes /approve while looking at head 1; the author pushes head 2 before the bot handles
// the comment. The approval is of head 1: refused, and nothing merges.
func TestAttackApproveRacesPush(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n  requiredApprovals: 1\n")
	head1 := h.releaseFoo("alice/foo", main, "alice")
	h.openPR(28, "alice", head1, main, "lgtm")
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(28, "alice", head1, main, nil))
	h.waitIdle()
	written := time.Now() // on head 1, while it is the head
	// GitHub stamps comments to the second and clocks differ: the bot allows commentSkew between the two.
	time.Sleep(commentSkew + time.Second)
	head2 := h.git.Commit("alice/foo", "", "alice", "describe foo", h.describedFoo())
	h.push(28, "alice", head2, main)
	h.waitIdle()
	h.commentAt(28, "catalog-admin", "/approve", written)
	h.waitIdle()
	h.requireNotMerged(28, "an /approve written on head 1 counted for head 2")
	if got := reactions(h, 28); got != "[/approve:-1]" {
		t.Errorf("reactions %s", got)
	}
	h.comment(28, "catalog-admin", "/approve")
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 28); !merged || at != head2 {
		t.Errorf("after an /approve of head 2: merged %v at %s", merged, at)
	}
}

// foo's owner approves someone else's change of foo (the owners stage passes on that approval); the
// author then pushes a different change of foo. The approval is of the old head: the owners stage fails.
func TestAttackApprovalOnOldHeadWidensChange(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head1 := h.releaseFoo("mallory/foo", main, "mallory")
	h.openPR(23, "mallory", head1, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(23, "mallory", head1, main, nil))
	h.waitIdle()
	h.review(23, "mallory", head1, main, "alice", "APPROVED", head1)
	h.waitIdle()
	if cr := h.lastCheckRun(); cr.Conclusion != "success" {
		t.Fatalf("after alice's approval of head 1: %s %s", cr.Conclusion, cr.Output.Summary)
	}
	head2 := h.git.Commit("mallory/foo", "", "mallory", "describe foo", h.describedFoo())
	h.push(23, "mallory", head2, main)
	h.waitIdle()
	if cr := h.lastCheckRun(); cr.HeadSHA != head2 || cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary, "mallory may not change 1") {
		t.Fatalf("check of head 2: %s %s", cr.Conclusion, cr.Output.Summary)
	}
	h.addLabel(23, "lgtm", head2, main)
	h.waitIdle()
	h.requireNotMerged(23, "an approval of head 1 permitted head 2")
}

// Sock puppets, owners of other packages and plain writers approve: none counts toward
// merge.requiredApprovals (unless merge.approvers says writers may); the readiness comment says whose
// approval would count. A maintainer's approval merges.
func TestAttackSockPuppetApproval(t *testing.T) {
	for _, tc := range []struct {
		name, approvers string
		writerCounts    bool
	}{
		{"owners", "", false},
		{"write", "  approvers: write\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.gh.SetPermission(repoFull, "wendy", "write")
			main, head := h.aliceReleasesFoo(24, repoConfig+"  requiredApprovals: 1\n"+tc.approvers)
			for _, puppet := range []string{"alice-puppet", "bob"} {
				h.review(24, "alice", head, main, puppet, "APPROVED", head)
				h.waitIdle()
			}
			h.requireNotMerged(24, "a sock puppet's or another package's owner's approval counted")
			body := h.readiness(24)
			for _, want := range []string{"0 of 1 required approvals", "not counted (may not approve this change): alice-puppet, bob", "approvals that count: catalog-admin"} {
				if !strings.Contains(body, want) {
					t.Errorf("readiness comment lacks %q:\n%s", want, body)
				}
			}
			if strings.Contains(body, "approvals that count: catalog-admin, alice") {
				t.Errorf("the author is offered as an approver:\n%s", body)
			}
			h.review(24, "alice", head, main, "wendy", "APPROVED", head)
			h.waitIdle()
			if merged, _ := h.gh.Merged(repoFull, 24); merged != tc.writerCounts {
				t.Fatalf("after a writer's approval: merged %v, want %v", merged, tc.writerCounts)
			}
			if !tc.writerCounts {
				h.review(24, "alice", head, main, "catalog-admin", "APPROVED", head)
				h.waitIdle()
				if merged, at := h.gh.Merged(repoFull, 24); !merged || at != head {
					t.Errorf("after the maintainer's approval: merged %v at %s", merged, at)
				}
			}
		})
	}
}

// removeLabel takes a label off by hand through GitHub's API (as a person would) and delivers the event
// (with the payload edits given, such as the pull request's state).
func (h *harness) removeLabel(n int, who, label, head, base string, edits ...map[string]any) {
	h.t.Helper()
	api := h.gh.URL + "/"
	c, err := github.NewClient(github.WithURLs(&api, &api), github.WithAuthToken("ghp_person"))
	if err != nil {
		h.t.Fatal(err)
	}
	// go-github does not escape the label's slash: build the request as GitHub's API wants it.
	req, err := c.NewRequest(context.Background(), "DELETE", fmt.Sprintf("repos/octo/catalog/issues/%d/labels/%s", n, url.PathEscape(label)), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if _, err := c.Do(req, nil); err != nil {
		h.t.Fatal(err)
	}
	extra := map[string]any{"label.name": label, "sender.login": who}
	for _, e := range edits {
		maps.Copy(extra, e)
	}
	h.deliver("pull_request", "pull_request/unlabeled.payload.json", prEdits(n, "alice", head, base, extra))
}

// A maintainer holds the author's pull request. The author's /unhold is refused; taking the label off by
// hand does not work either (the bot puts it back). The maintainer's /unhold merges it.
func TestAttackAuthorLiftsMaintainerHold(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "catalog-admin", "maintain")
	h.gh.SetPermission(repoFull, "alice", "write")
	main, head := h.aliceReleasesFoo(25, repoConfig+"  requiredLabels: [lgtm]\n")
	h.comment(25, "catalog-admin", "/hold")
	h.waitIdle()
	h.addLabel(25, "lgtm", head, main)
	h.waitIdle()
	h.comment(25, "alice", "/unhold")
	h.waitIdle()
	h.requireNotMerged(25, "the author lifted the maintainer's hold with /unhold")
	held := func() bool { return slices.Contains(h.gh.PullRequest(repoFull, 25).Labels, "do-not-merge/hold") }
	if !held() {
		t.Fatal("the hold label is gone")
	}
	if body := h.readiness(25); !strings.Contains(body, "placed by catalog-admin") {
		t.Errorf("the readiness comment does not name who placed the hold:\n%s", body)
	}
	h.removeLabel(25, "alice", "do-not-merge/hold", head, main)
	h.waitIdle()
	h.requireNotMerged(25, "the author took the maintainer's hold label off by hand")
	if !held() {
		t.Fatal("the hold label the author removed was not put back")
	}
	h.comment(25, "catalog-admin", "/unhold")
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 25); !merged || at != head {
		t.Errorf("after the maintainer's /unhold: merged %v at %s", merged, at)
	}
}

// The base branch's configuration is broken (a typo) while it requires an approval: nothing falls back to
// defaults (which require none). The check fails naming the file, and nothing merges, not even when the
// configuration breaks after a check passed.
func TestAttackBrokenBaseConfigLoosensRules(t *testing.T) {
	strict := repoConfig + "  requiredApprovals: 1\n"
	broken := strings.Replace(strict, "maintainers:", "maintainer:", 1)
	t.Run("broken-before-the-check", func(t *testing.T) {
		h := newHarness(t)
		old := h.seedMain(strict)
		tip := h.moveMain("typo", map[string]string{".catalogbot.yaml": broken})
		head := h.releaseFoo("alice/foo", old, "alice") // the merge base's configuration is fine
		h.openPR(26, "alice", head, tip)
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(26, "alice", head, tip, nil))
		h.waitIdle()
		h.requireNotMerged(26, "a broken base configuration dropped requiredApprovals")
		if cr := h.lastCheckRun(); cr.Conclusion == "success" || !strings.Contains(cr.Output.Summary+cr.Output.Text, ".catalogbot.yaml") {
			t.Errorf("check run %s: %s", cr.Conclusion, cr.Output.Summary)
		}
		if body := h.readiness(26); !strings.Contains(body, "the base branch's .catalogbot.yaml is invalid") {
			t.Errorf("readiness comment:\n%s", body)
		}
		h.comment(26, "catalog-admin", "/approve")
		h.waitIdle()
		h.requireNotMerged(26, "approved under a broken configuration")
	})
	t.Run("broken-after-the-check", func(t *testing.T) {
		h := newHarness(t)
		main, head := h.aliceReleasesFoo(27, strict)
		h.moveMain("typo", map[string]string{".catalogbot.yaml": broken})
		h.review(27, "alice", head, main, "catalog-admin", "APPROVED", head)
		h.waitIdle()
		h.requireNotMerged(27, "the configuration broke after the check and the merge went ahead")
		if runs := h.gh.CheckRuns(repoFull); len(runs) != 2 || runs[1].Conclusion == "success" {
			t.Errorf("check runs: want a re-check that fails: %+v", runs)
		}
	})
}
