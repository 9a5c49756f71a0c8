package bot

import (
	"fmt"
	"strings"
	"testing"
)

// deliverGroup delivers merge_group checks_requested for a group on head from base, on branch headRef.
func (h *harness) deliverGroup(head, base, headRef string) {
	h.t.Helper()
	h.deliver("merge_group", "merge_group/checks_requested.payload.json", repoEdits(map[string]any{
		"merge_group.head_sha": head, "merge_group.base_sha": base,
		"merge_group.head_ref": headRef, "merge_group.base_ref": "refs/heads/main",
	}))
}

// TestAttackMergeGroupUnready: a merge queue group is checked as a change whose ownership was decided on
// its pull request, so a group whose pull request the bot would not merge must fail: one whose owners
// check failed (no approval), one on hold, and a group branch naming no pull request. Before: each
// group's check run succeeded (owners skipped), and the merge queue merged it.
func TestAttackMergeGroupUnready(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	// #9: mallory changes alice's package; nobody approved.
	unapproved := h.label(h.releaseFoo("mallory/foo", main, "mallory"), "UNAPPROVED")
	h.openPR(9, "mallory", unapproved, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(9, "mallory", unapproved, main, nil))
	// #10: alice's own change, on hold.
	held := h.label(h.git.Commit("alice/bar", main, "alice", "foo-operator v0.3.0",
		h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.3.0"}})), "HELD")
	h.openPR(10, "alice", held, main, "do-not-merge/hold")
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(10, "alice", held, main, nil))
	h.waitIdle()

	groups := map[string]struct{ headRef, want string }{
		h.label(h.releaseFoo("gh-readonly-queue/main/pr-9", main, "github"), "GROUP9"): {
			fmt.Sprintf("refs/heads/gh-readonly-queue/main/pr-9-%s", unapproved), "pull request #\u200b9 is not ready to merge"},
		h.label(h.git.Commit("gh-readonly-queue/main/pr-10", main, "github", "merge #10",
			h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.3.0"}})), "GROUP10"): {
			fmt.Sprintf("refs/heads/gh-readonly-queue/main/pr-10-%s", held), "pull request #\u200b10 is not ready to merge"},
		h.label(h.git.Commit("gh-readonly-queue/main/other", main, "github", "a group",
			h.catalogFiles(map[string][]string{"bar-operator": {"0.1.0", "0.2.0"}})), "GROUPX"): {
			"refs/heads/not-a-queue/main", "is not a merge queue branch"},
	}
	for head, g := range groups {
		h.deliverGroup(head, main, g.headRef)
	}
	h.waitIdle()
	for head, g := range groups {
		runs := h.checkRunsOn(head)
		if len(runs) != 1 || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Output.Summary, g.want) {
			t.Errorf("group %s (%s): %+v\nwant one failed check run saying %q", h.labels[head], g.headRef, runs, g.want)
		}
	}
	for _, n := range []int{9, 10} {
		h.requireNotMerged(n, "a pull request the bot would not merge")
	}
}
