package ghaction

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/report"
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
	// The maintainer approved the tested head, but main moved after the checks ran (between the run's
	// read of the tip and its merge): the check was of the merge into the old tip, so nothing merges,
	// whatever the move changed.
	gh.AddReview(full, 3, githubtest.Review{User: "admin", State: "APPROVED", CommitID: head})
	gh.SetRef(full, "heads/main", head)
	staleTipOnce(gh, full, base)
	notMerged(3, "moved to "+head[:12]+" after the checks of the merge into "+base[:12])
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

// staleTipOnce answers the next read of main's ref with sha, as GitHub answered it before main moved to
// where the fake has it now: the run checks the merge into sha, and main moves before its merge.
func staleTipOnce(gh *githubtest.Server, full, sha string) {
	body := fmt.Sprintf(`{"ref":"refs/heads/main","node_id":"MDM6UmVmcmVmcy9oZWFkcy9tYWlu","url":"%[3]s/repos/%[1]s/git/refs/heads/main",`+
		`"object":{"type":"commit","sha":"%[2]s","url":"%[3]s/repos/%[1]s/git/commits/%[2]s"}}`, full, sha, gh.URL)
	gh.InjectFault("GET", "/repos/"+full+"/git/ref/heads/main", 1, githubtest.Fault{Status: http.StatusOK,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: body})
}

// TestAttackActionMergesABranchBehindTheBase: the pull request branched before main released foo v0.2.0
// in a file of its own; the pull request releases v0.2.0 too, in foo's catalog.json. Checked after main's
// release (the event's base is main's new tip), its head's tree alone is valid, but what merging lands,
// both releases, is not (two bundles foo.v0.2.0). With merge: true the Action merged it and left main
// failing validation; it now checks the merge of the head into main's tip and does not merge.
func TestAttackActionMergesABranchBehindTheBase(t *testing.T) {
	const full = "Codertocat/Hello-World"
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [alice]\n"
	dir := t.TempDir()
	g := newTestGit(t, dir, "main")
	base := g.commit("admin", map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": catalogV1})
	head := g.commit("alice", map[string]string{"catalog/foo/catalog.json": catalogV2})
	g.checkout("released", base)
	fast := `{"schema":"olm.channel","name":"fast","package":"foo","entries":[{"name":"foo.v0.2.0","replaces":"foo.v0.1.0"}]}
{"schema":"olm.bundle","name":"foo.v0.2.0","package":"foo","image":"quay.io/example/foo-bundle:v0.2.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.2.0"}}]}
`
	tip := g.commit("admin", map[string]string{"catalog/foo/fast.json": fast})
	gh := githubtest.New(t)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", tip)
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 1, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: tip})
	r, _, stdout := runMerging(t, gh, dir, 1, tip, head, "alice")
	if merged, _ := gh.Merged(full, 1); merged {
		t.Fatalf("merged a head whose merge into main no check saw:\n%s", stdout)
	}
	if r.Verdict() != "fail" || !strings.Contains(stdout, "foo.v0.2.0") {
		t.Errorf("verdict %s, want the merge's duplicate bundle reported:\n%s", r.Verdict(), stdout)
	}
}

// TestAttackActionApprovalWithdrawnBeforeMerge: dave, who owns nothing, releases foo; alice, foo's owner,
// approved when the run read the reviews for its owners stage, which allowed the change on her approval,
// and requests changes before the run merges. The approvals are read again at the merge decision: the
// check's verdict rested on an approval that is gone, so nothing merges (before, it merged).
func TestAttackActionApprovalWithdrawnBeforeMerge(t *testing.T) {
	const full = "Codertocat/Hello-World"
	dir, base, head := repoWithConfig(t, "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [alice]\n")
	gh := githubtest.New(t)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", base)
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 1, User: "dave", HeadSHA: head, BaseRef: "main", BaseSHA: base})
	gh.AddReview(full, 1, githubtest.Review{User: "alice", State: "APPROVED", CommitID: head})
	gh.AddReview(full, 1, githubtest.Review{User: "alice", State: "CHANGES_REQUESTED", CommitID: head})
	// the run's first read of the reviews (for the owners stage) sees alice's approval only
	approved := fmt.Sprintf(`[{"id":1,"node_id":"PRR_1","user":{"login":"alice","id":2,"type":"User"},"body":"","state":"APPROVED","commit_id":"%s",`+
		`"html_url":"https://github.com/%[2]s/pull/1#pullrequestreview-1","pull_request_url":"%[3]s/repos/%[2]s/pulls/1","author_association":"OWNER",`+
		`"submitted_at":"2026-01-01T00:00:00Z"}]`, head, full, gh.URL)
	gh.InjectFault("GET", "/repos/"+full+"/pulls/1/reviews", 1, githubtest.Fault{Status: http.StatusOK,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Body: approved})
	r, outs, stdout := runMerging(t, gh, dir, 1, base, head, "dave")
	if r.Stages[0].Status != "pass" {
		t.Fatalf("the owners stage did not weigh alice's approval:\n%s", stdout)
	}
	if merged, _ := gh.Merged(full, 1); merged || outs["merge_unmet"] != "check-approvals" {
		t.Fatalf("merged %v, merge_unmet %q: want not merged on a withdrawn approval\n%s", merged, outs["merge_unmet"], stdout)
	}
}

// runMerging runs the Action with merge: true on pull_request_target for pull request n (base..head by
// author) of the repository in dir against gh; it returns the report, the outputs and the text output.
func runMerging(t *testing.T, gh *githubtest.Server, dir string, n int, base, head, author string) (*report.Report, map[string]string, string) {
	t.Helper()
	tmp := t.TempDir()
	env := map[string]string{
		"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": prPayload(t, n, base, head, author),
		"GITHUB_OUTPUT": filepath.Join(tmp, "out"), "GITHUB_API_URL": gh.URL, "CATALOGBOT_GITHUB_TOKEN": "ghs_x",
	}
	var stdout bytes.Buffer
	r, err := Run(context.Background(), func(k string) string { return env[k] }, &stdout, &bytes.Buffer{}, Options{RepoDir: dir, SkipImages: true, Merge: true})
	if err != nil {
		t.Fatal(err)
	}
	return r, readOutputs(t, env["GITHUB_OUTPUT"]), stdout.String()
}
