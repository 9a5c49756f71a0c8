package bot

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Issue 33 items 3 (holds) and 4: a hold is a fact with a history, read when deciding; the holder or a
// maintainer lifts it, nobody else.

// hasHold reports whether pull request n carries the hold label on GitHub.
func (h *harness) hasHold(n int) bool {
	return slices.Contains(h.gh.PullRequest(repoFull, n).Labels, "do-not-merge/hold")
}

// setState closes or reopens pull request n on GitHub and delivers the event ("closed", "reopened").
func (h *harness) setState(n int, author, head, base, action string) {
	h.t.Helper()
	state := map[string]string{"closed": "closed", "reopened": "open"}[action]
	h.gh.SetState(repoFull, n, state)
	status, text := h.post("pull_request", "", payload(h.t, "pull_request/"+action+".payload.json",
		prEdits(n, author, head, base, map[string]any{"pull_request.state": state})), testSecret)
	if status >= 300 {
		h.t.Fatalf("%s delivery: %d %s", action, status, text)
	}
}

// heldRelease opens pull request n, alice's release of foo-operator v0.2.0 on main under config, held by
// holder with /hold before its check (it would merge at once), and checks it.
func (h *harness) heldRelease(n int, config, holder string) (main, head string) {
	h.t.Helper()
	main = h.seedMain(config)
	head = h.releaseFoo("alice/foo", main, "alice")
	h.openPR(n, "alice", head, main)
	h.comment(n, holder, "/hold")
	h.waitIdle()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "alice", head, main, nil))
	h.waitIdle()
	h.requireNotMerged(n, "merged while on hold")
	return main, head
}

// requireMerged requires pull request n merged at head, after what.
func (h *harness) requireMerged(n int, head, after string) {
	h.t.Helper()
	if merged, at := h.gh.Merged(repoFull, n); !merged || at != head {
		h.t.Fatalf("after %s: merged %v at %s", after, merged, at)
	}
}

// Alice owns foo-operator; bob, her second account, owns bar-operator. Her pull request changes foo and
// drags bar in (bob approves it as bar's owner, so the checks pass). A maintainer holds it; bob's /unhold
// and bob taking the label off are refused: owning a package the author chose to touch is no right over
// a maintainer's hold. Before: an owner of any touched package lifted any hold, and it merged. The
// maintainer's /unhold merges it.
func TestAttackDraggedInOwnerLiftsMaintainerHold(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "catalog-admin", "maintain")
	main := h.seedMain(repoConfig)
	head := h.git.Commit("alice/foo-bar", main, "alice", "foo-operator v0.2.0, and bar",
		h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0"}, "bar-operator": {"0.1.0", "0.2.0"}}))
	h.openPR(27, "alice", head, main)
	h.comment(27, "catalog-admin", "/hold") // before the check: it would merge at once
	h.waitIdle()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(27, "alice", head, main, nil))
	h.waitIdle()
	h.review(27, "alice", head, main, "bob", "APPROVED", head)
	h.waitIdle()
	if cr := h.lastCheckRun(); cr.Conclusion != "success" {
		t.Fatalf("the check with bar's owner's approval: %s %s", cr.Conclusion, cr.Output.Summary)
	}
	h.comment(27, "bob", "/unhold")
	h.waitIdle()
	h.requireNotMerged(27, "the owner of a dragged-in package lifted the maintainer's hold with /unhold")
	if !h.hasHold(27) {
		t.Fatal("the hold label is gone after bob's /unhold")
	}
	if r := reactions(h, 27); !strings.Contains(r, "/unhold:-1") {
		t.Errorf("bob's /unhold was not refused: %s", r)
	}
	h.removeLabel(27, "bob", "do-not-merge/hold", head, main)
	h.waitIdle()
	h.requireNotMerged(27, "the owner of a dragged-in package took the maintainer's hold label off")
	if !h.hasHold(27) {
		t.Fatal("the hold label bob removed was not put back")
	}
	h.comment(27, "catalog-admin", "/unhold")
	h.waitIdle()
	h.requireMerged(27, head, "the maintainer's /unhold")
}

// A maintainer holds alice's pull request. Alice closes it, takes the hold label off while it is closed,
// and reopens it: the label's removal while closed lifted nothing, the label is back and it does not
// merge. Before: the hold was the label, and the pull request merged on reopening. The maintainer's
// /unhold lifts it, and the readiness comment's history says who held and who lifted, and when.
func TestAttackHoldLabelRemovedWhileClosed(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "catalog-admin", "maintain")
	main, head := h.heldRelease(28, repoConfig, "catalog-admin")
	h.setState(28, "alice", head, main, "closed")
	h.waitIdle()
	h.removeLabel(28, "alice", "do-not-merge/hold", head, main, map[string]any{"pull_request.state": "closed"})
	h.waitIdle()
	h.setState(28, "alice", head, main, "reopened")
	h.waitIdle()
	h.requireNotMerged(28, "the hold label taken off while closed lifted the maintainer's hold")
	if !h.hasHold(28) {
		t.Error("the hold label taken off while closed was not put back on reopening")
	}
	if body := h.readiness(28); !strings.Contains(body, "- [ ] on hold (label `do-not-merge/hold`, placed by catalog-admin)") {
		t.Errorf("the readiness comment does not show the maintainer's hold:\n%s", body)
	}
	h.comment(28, "catalog-admin", "/unhold")
	h.waitIdle()
	h.requireMerged(28, head, "the maintainer's /unhold")
	requireHistory(t, h.readiness(28), "held by catalog-admin with `/hold`", "lifted by catalog-admin with `/unhold`")
}

// A holder who is neither maintainer nor owner (triage access) lifts their own hold by taking the label
// off: lifted, and the history says so. Another triager's /unhold of it is refused.
func TestHolderLiftsOwnHoldByLabel(t *testing.T) {
	h := newHarness(t)
	h.gh.SetPermission(repoFull, "tess", "triage")
	h.gh.SetPermission(repoFull, "trent", "triage")
	main, head := h.heldRelease(29, repoConfig, "tess")
	h.comment(29, "trent", "/unhold")
	h.waitIdle()
	h.requireNotMerged(29, "another triager lifted tess's hold")
	h.removeLabel(29, "tess", "do-not-merge/hold", head, main)
	h.waitIdle()
	h.requireMerged(29, head, "the holder took the label off")
	requireHistory(t, h.readiness(29), "held by tess with `/hold`", "lifted by tess (label taken off)")
}

// requireHistory requires the readiness comment's hold history to hold the events, in order, each with a
// time.
func requireHistory(t *testing.T, body string, events ...string) {
	t.Helper()
	var lines []string
	stamp := regexp.MustCompile(`, [0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} UTC$`)
	_, history, _ := strings.Cut(body, "Hold history:\n")
	for line := range strings.SplitSeq(history, "\n") {
		if !strings.HasPrefix(line, "- ") {
			break
		}
		if !stamp.MatchString(line) {
			t.Errorf("hold history line without a time: %q", line)
		}
		lines = append(lines, stamp.ReplaceAllString(strings.TrimPrefix(line, "- "), ""))
	}
	if !slices.Equal(lines, events) {
		t.Errorf("hold history %q, want %q:\n%s", lines, events, body)
	}
}
