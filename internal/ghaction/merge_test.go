package ghaction

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// repoWithConfig is testRepo with .catalogbot.yaml cfg on the base.
func repoWithConfig(t *testing.T, cfg string) (dir, base, head string) {
	t.Helper()
	dir = t.TempDir()
	g := newTestGit(t, dir, "")
	commit := func(files map[string]string) string { return g.commit("x", files) }
	base = commit(map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": catalogV1})
	head = commit(map[string]string{"catalog/foo/catalog.json": catalogV2})
	return dir, base, head
}

// Hostile ways to get a merge through the action: a sock puppet's approval toward requiredApprovals, a
// push after the checks (GitHub's head differs from the tested one), a writer who owns nothing approving
// under merge.approvers: owners, a base that moved after the checks.
// Each leaves the pull request unmerged; a maintainer's approval on the tested head merges it.
func TestActionMergeAttacks(t *testing.T) {
	const full = "Codertocat/Hello-World"
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [alice]\nmerge:\n  requiredApprovals: 1\n"
	dir, base, head := repoWithConfig(t, cfg)
	gh := githubtest.New(t)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", base)
	gh.SetPermission(full, "bob", "write")
	run := func(n int) map[string]string {
		t.Helper()
		tmp := t.TempDir()
		env := map[string]string{
			"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": prPayload(t, n, base, head, "alice"),
			"GITHUB_OUTPUT": filepath.Join(tmp, "out"), "GITHUB_API_URL": gh.URL, "CATALOGBOT_GITHUB_TOKEN": "ghs_x",
		}
		var stdout bytes.Buffer
		if _, err := Run(context.Background(), func(k string) string { return env[k] }, &stdout, &bytes.Buffer{}, Options{RepoDir: dir, SkipImages: true, Merge: true}); err != nil {
			t.Fatal(err)
		}
		outs := readOutputs(t, env["GITHUB_OUTPUT"])
		outs["stdout"] = stdout.String()
		return outs
	}
	notMerged := func(n int, why string) {
		t.Helper()
		outs := run(n)
		if merged, _ := gh.Merged(full, n); merged || outs["merged"] != "false" || !strings.Contains(outs["stdout"], why) {
			t.Fatalf("#%d: merged %v, outputs %v, want not merged because %q\n%s", n, merged, outs["merged"], why, outs["stdout"])
		}
	}
	// The owner alice authored it; a sock puppet with no access approves the head.
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 1, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: base})
	gh.AddReview(full, 1, githubtest.Review{User: "sock", State: "APPROVED", CommitID: head})
	notMerged(1, "0 of 1 required approvals")
	// The maintainer approved, but GitHub's head is no longer the tested one.
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 2, User: "alice", HeadSHA: strings.Repeat("e", 40), BaseRef: "main", BaseSHA: base})
	gh.AddReview(full, 2, githubtest.Review{User: "admin", State: "APPROVED", CommitID: head})
	notMerged(2, "the head moved")
	// bob has write access but owns nothing: merge.approvers defaults to owners, so his approval does not
	// count (the Action counted any writer before issue 22).
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 3, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: base})
	gh.AddReview(full, 3, githubtest.Review{User: "bob", State: "APPROVED", CommitID: head})
	notMerged(3, "0 of 1 required approvals")
	// The maintainer approved the tested head, but main moved after the checks ran, changing foo, which
	// the pull request changes too (main moved to the pull request's own head, say).
	gh.AddReview(full, 3, githubtest.Review{User: "admin", State: "APPROVED", CommitID: head})
	gh.SetRef(full, "heads/main", head)
	notMerged(3, "moved to "+head[:12]+" and changed foo, which this pull request also changes")
	gh.SetRef(full, "heads/main", base)
	outs := run(3)
	if merged, at := gh.Merged(full, 3); !merged || at != head || outs["merged"] != "true" {
		t.Fatalf("#3 with the maintainer's approval: merged %v at %s, outputs %v\n%s", merged, at, outs["merged"], outs["stdout"])
	}
}

// The Action used to have merge rules of its own (issue 22 item 4): it counted any writer's approval
// although merge.approvers defaults to owners, and ignored the hold label and merge conflicts. It now takes
// the bot's decision: none of these merges, each names the unmet condition in merge_unmet.
func TestAttackActionDecidesUnlikeTheBot(t *testing.T) {
	const full = "Codertocat/Hello-World"
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [alice]\nmerge:\n  requiredApprovals: 1\n"
	dir, base, head := repoWithConfig(t, cfg)
	gh := githubtest.New(t)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", base)
	gh.SetPermission(full, "bob", "write")
	conflict := false
	for _, tc := range []struct {
		n        int
		approver string
		labels   []string
		conflict bool
		unmet    string
	}{
		{1, "bob", nil, false, "approvals"},
		{2, "admin", []string{"do-not-merge/hold"}, false, "hold"},
		{3, "admin", nil, true, "mergeable"},
	} {
		gh.AddPullRequest(full, githubtest.PullRequest{Number: tc.n, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: base, Labels: tc.labels})
		gh.AddReview(full, tc.n, githubtest.Review{User: tc.approver, State: "APPROVED", CommitID: head})
		if tc.conflict {
			gh.SetMergeable(full, tc.n, &conflict)
		}
		gh.SetRef(full, "heads/main", base) // each case on its own, whatever an earlier one did
		tmp := t.TempDir()
		env := map[string]string{
			"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": prPayload(t, tc.n, base, head, "alice"),
			"GITHUB_OUTPUT": filepath.Join(tmp, "out"), "GITHUB_API_URL": gh.URL, "CATALOGBOT_GITHUB_TOKEN": "ghs_x",
		}
		var stdout bytes.Buffer
		if _, err := Run(context.Background(), func(k string) string { return env[k] }, &stdout, &bytes.Buffer{}, Options{RepoDir: dir, SkipImages: true, Merge: true}); err != nil {
			t.Fatal(err)
		}
		outs := readOutputs(t, env["GITHUB_OUTPUT"])
		if merged, _ := gh.Merged(full, tc.n); merged || outs["merge_unmet"] != tc.unmet {
			t.Errorf("#%d: merged %v, merge_unmet %q, want not merged for %q\n%s", tc.n, merged, outs["merge_unmet"], tc.unmet, stdout.String())
		}
	}
}
