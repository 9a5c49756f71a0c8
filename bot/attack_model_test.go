package bot

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// Attacks on the model of the change (issue 33): the check judged the head's tree from the merge base
// and trusted facts cached at check time, while GitHub lands the head merged into the base's tip, with
// the approvals as they are at merge time.

// fastFoo is main's own release of foo-operator v0.2.0, in a file of its own (a fast channel).
func (h *harness) fastFoo() map[string]string {
	img := h.bundleImage("foo-operator", "0.2.0")
	return map[string]string{"catalog/foo-operator/fast.json": `{"schema": "olm.channel", "name": "fast", "package": "foo-operator", "entries": [{"name": "foo-operator.v0.2.0", "replaces": "foo-operator.v0.1.0"}]}
{"schema": "olm.bundle", "name": "foo-operator.v0.2.0", "package": "foo-operator", "image": "` + img + `", "properties": [{"type": "olm.package", "value": {"packageName": "foo-operator", "version": "0.2.0"}}]}
`}
}

// TestAttackBranchBehindTheBase: alice branches before main releases foo-operator v0.2.0 in a file of
// its own, and releases v0.2.0 too in foo's catalog.json. Her head's tree alone is valid; what merging
// lands (both releases: two bundles foo-operator.v0.2.0) is not. Checked after main's release, or
// /retest-ed after it instead of updating the branch, the check passed on the head's tree and the pull
// request merged, leaving main failing validation. Every stage now runs on the merge of the head into
// main's tip: the check fails and nothing merges.
func TestAttackBranchBehindTheBase(t *testing.T) {
	for _, retest := range []bool{false, true} {
		name := map[bool]string{false: "checked-after", true: "retest-after"}[retest]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			old := h.seedMain(repoConfig)
			head := h.releaseFoo("alice/foo", old, "alice")
			h.openPR(30, "alice", head, old)
			if retest { // checked (and passed) before main moved: main's move needs a check; she asks for one
				h.gh.FailNext("PUT", "/repos/octo/catalog/pulls/30/merge", 405, 1) // a required review stops the first merge
				h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(30, "alice", head, old, nil))
				h.waitIdle()
				if cr := h.lastCheckRun(); cr.Conclusion != "success" {
					t.Fatalf("check before main moved: %s %s", cr.Conclusion, cr.Output.Summary)
				}
			}
			tip := h.moveMain("foo-operator v0.2.0 on a fast channel", h.fastFoo())
			if retest {
				h.comment(30, "alice", "/retest")
			} else {
				h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(30, "alice", head, tip, nil))
			}
			h.waitIdle()
			h.requireNotMerged(30, "the merge of a head behind main was never checked")
			cr := h.lastCheckRun()
			if cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary, "validate") {
				t.Errorf("check run of the merge: %s: %s", cr.Conclusion, cr.Output.Summary)
			}
		})
	}
}

// TestAttackOwnersReListedThroughTheMerge: foo's OWNERS file lists mallory, alice, bob and carol; a
// maintainer removes mallory on main. alice's branch, from before the removal, moves mallory to the end
// of the list (the same owners as at her merge base: package content an owner may change) and releases
// foo. Merging brings mallory back (git merges the removal and the move cleanly). The owners file is now
// judged against main's tip, where the merge re-lists a removed owner: a maintainer's change.
func TestAttackOwnersReListedThroughTheMerge(t *testing.T) {
	h := newHarness(t)
	cfg := strings.Replace(repoConfig, "owners:\n  foo-operator: [alice]\n", "ownersFrom: catalog/{package}/OWNERS\nowners:\n  foo-operator: [alice]\n", 1)
	const owners = "approvers:\n  - mallory\n  - alice\n  - bob\n  - carol\n"
	files := h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0"}, "bar-operator": {"0.1.0"}})
	files[".catalogbot.yaml"] = cfg
	files["catalog/foo-operator/OWNERS"] = owners
	files["catalog/foo-operator/.indexignore"] = "OWNERS\n"
	old := h.git.Commit("main", "", "catalog-admin", "base", files)
	h.gh.SetRef(repoFull, "heads/main", old)
	change := h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0"}})
	change["catalog/foo-operator/OWNERS"] = strings.Replace(owners, "  - mallory\n", "", 1) + "  - mallory\n"
	head := h.git.Commit("alice/foo", old, "alice", "foo-operator v0.2.0, owners sorted", change)
	tip := h.moveMain("mallory no longer owns foo", map[string]string{"catalog/foo-operator/OWNERS": strings.Replace(owners, "  - mallory\n", "", 1)})
	h.openPR(31, "alice", head, tip)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(31, "alice", head, tip, nil))
	h.waitIdle()
	h.requireNotMerged(31, "a removed owner was re-listed through the merge")
	if cr := h.lastCheckRun(); cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary, "alice may not change") {
		t.Errorf("check run %s: %s", cr.Conclusion, cr.Output.Summary)
	}
}

// TestAttackApprovalWithdrawnAfterCheck: dave, who owns nothing, releases foo; alice, foo's owner,
// approves, and the owners stage allows the change on her approval. She then requests changes. The
// check's verdict rested on an approval that is gone: the pull request is no longer mergeable, and the
// check runs again without it (it fails). Before, only a failed owners stage was re-checked: the label
// merged it.
func TestAttackApprovalWithdrawnAfterCheck(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head := h.releaseFoo("dave/foo", main, "dave")
	h.openPR(32, "dave", head, main)
	h.gh.AddReview(repoFull, 32, githubtest.Review{User: "alice", State: "APPROVED", CommitID: head})
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(32, "dave", head, main, nil))
	h.waitIdle()
	if cr := h.lastCheckRun(); cr.Conclusion != "success" {
		t.Fatalf("check with the owner's approval: %s %s", cr.Conclusion, cr.Output.Summary)
	}
	h.review(32, "dave", head, main, "alice", "CHANGES_REQUESTED", head)
	h.waitIdle()
	h.addLabel(32, "lgtm", head, main)
	h.waitIdle()
	h.requireNotMerged(32, "merged on an owners verdict whose approval was withdrawn")
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 2 || runs[1].Conclusion != "failure" || !strings.Contains(runs[1].Output.Summary, "dave may not change") {
		t.Errorf("check runs: want the passed check and a failed re-check without the approval: %+v", runs)
	}
}
