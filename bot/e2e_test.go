package bot

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-github/v92/github"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// describedFoo is foo-operator v0.1.0 and v0.2.0 with a package description.
func (h *harness) describedFoo() map[string]string {
	files := h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0", "0.2.0"}})
	f := "catalog/foo-operator/catalog.json"
	files[f] = strings.Replace(files[f], `"defaultChannel": "stable"`, `"defaultChannel": "stable",`+"\n"+`  "description": "Foo"`, 1)
	return files
}

// comment seeds a comment on GitHub and delivers its issue_comment event.
func (h *harness) comment(n int, user, body string) {
	h.t.Helper()
	h.commentAt(n, user, body, time.Now())
}

// commentAt is comment for a comment written at a given time.
func (h *harness) commentAt(n int, user, body string, at time.Time) {
	h.t.Helper()
	h.deliver("issue_comment", "issue_comment/created.payload.json", h.newComment(n, user, body, at))
}

// newComment seeds a comment on GitHub and returns the edits of its issue_comment event.
func (h *harness) newComment(n int, user, body string, at time.Time) map[string]any {
	id := h.gh.AddComment(repoFull, n, user, body)
	return repoEdits(map[string]any{
		"issue.number": n, "issue.state": "open",
		"issue.pull_request": map[string]any{"url": fmt.Sprintf("https://api.github.com/repos/%s/pulls/%d", repoFull, n)},
		"comment.id":         id, "comment.body": body, "comment.user.login": user, "sender.login": user, "sender.type": "User",
		"comment.created_at": at.UTC().Format(time.RFC3339),
	})
}

// addLabel labels a pull request through GitHub's API (as a person would) and delivers the event.
func (h *harness) addLabel(n int, label, head, base string) {
	h.t.Helper()
	api := h.gh.URL + "/"
	c, err := github.NewClient(github.WithURLs(&api, &api), github.WithAuthToken("ghp_person"))
	if err != nil {
		h.t.Fatal(err)
	}
	if _, _, err := c.Issues.AddLabelsToIssue(context.Background(), "octo", "catalog", n, []string{label}); err != nil {
		h.t.Fatal(err)
	}
	h.deliver("pull_request", "pull_request/labeled.payload.json", prEdits(n, "alice", head, base, map[string]any{"label.name": label}))
}

// An owner's pull request: checked at once (in progress, then success), merged with the tested head as
// the SHA guard, and one readiness comment saying so.
func TestPullRequestPassesAndMerges(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 1); !merged || at != head {
		t.Errorf("merged %v at %s, want the tested head %s", merged, at, head)
	}
	golden(t, "pr-passes-and-merges", h.transcript([]int{1}))
}

// Someone who owns nothing changes foo: the owners stage fails with an annotation, nothing merges. Then
// foo's owner comments /approve: a +1 reaction, the checks run again with alice as approver, and the pull
// request merges.
func TestForbiddenChangeThenOwnerApproves(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("mallory/foo", main, "mallory"), "HEAD")
	h.openPR(2, "mallory", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(2, "mallory", head, main, nil))
	h.waitIdle()
	if merged, _ := h.gh.Merged(repoFull, 2); merged {
		t.Fatal("a forbidden change was merged")
	}
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].Conclusion != "failure" || len(runs[0].Output.Annotations) == 0 {
		t.Fatalf("check runs after the forbidden change: %+v", runs)
	}
	h.comment(2, "bob", "/approve") // bob owns bar, not foo
	h.waitIdle()
	h.comment(2, "alice", "Looks good.\n/approve")
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 2); !merged || at != head {
		t.Errorf("after the owner's /approve: merged %v at %s", merged, at)
	}
	golden(t, "forbidden-then-approved", h.transcript([]int{2}))
}

// A pull request on hold passes but is not merged. The hold label was there before the bot saw it (its
// origin is unknown, so it is someone else's): /unhold by someone without access and by the author are
// refused with a reply; /unhold by a maintainer releases it and it merges.
func TestHoldAndUnhold(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(3, "alice", head, main, "do-not-merge/hold")
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(3, "alice", head, main, nil))
	h.waitIdle()
	if merged, _ := h.gh.Merged(repoFull, 3); merged {
		t.Fatal("a held pull request was merged")
	}
	h.comment(3, "mallory", "/unhold")
	h.waitIdle()
	h.comment(3, "alice", "/unhold")
	h.waitIdle()
	if merged, _ := h.gh.Merged(repoFull, 3); merged {
		t.Fatal("the author lifted a hold someone else placed")
	}
	h.comment(3, "catalog-admin", "/unhold")
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 3); !merged || at != head {
		t.Errorf("after the maintainer's /unhold: merged %v at %s", merged, at)
	}
	golden(t, "hold-unhold", h.transcript([]int{3}))
}

// The author may lift a hold the author placed: /hold, then /unhold, both with a 👍.
func TestAuthorLiftsOwnHold(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(12, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(12, "alice", head, main, nil))
	h.waitIdle()
	h.comment(12, "alice", "/hold")
	h.waitIdle()
	if !slices.Contains(h.gh.PullRequest(repoFull, 12).Labels, "do-not-merge/hold") {
		t.Fatal("/hold did not put the label on")
	}
	h.comment(12, "alice", "/unhold")
	h.waitIdle()
	if slices.Contains(h.gh.PullRequest(repoFull, 12).Labels, "do-not-merge/hold") {
		t.Fatal("the author could not lift the author's own hold")
	}
	if got := reactions(h, 12); got != "[/hold:+1 /unhold:+1]" {
		t.Errorf("reactions %s", got)
	}
}

// reactions lists a pull request's comments' reactions as body:content.
func reactions(h *harness, n int) string {
	var out []string
	for _, c := range h.gh.Comments(repoFull, n) {
		for _, r := range c.Reactions {
			out = append(out, c.Body+":"+r.Content)
		}
	}
	return fmt.Sprint(out)
}

// A push while the old head is being checked stops that run (its check run is cancelled) and the new
// head is checked and merged.
func TestNewPushCancelsRunningCheck(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head1 := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD1")
	h.openPR(4, "alice", head1, main)
	described := h.describedFoo() // pushes its images before the registry blocks
	h.block.block()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(4, "alice", head1, main, nil))
	<-h.block.arrived // the first check is in its images stage
	head2 := h.label(h.git.Commit("alice/foo", "", "alice", "describe foo", described), "HEAD2")
	h.gh.PushHead(repoFull, 4, head2)
	h.git.SetPull(4, head2)
	h.deliver("pull_request", "pull_request/synchronize.payload.json", prEdits(4, "alice", head2, main, nil))
	h.waitFor("the first check run to be cancelled", func() bool {
		runs := h.gh.CheckRuns(repoFull)
		return len(runs) > 0 && runs[0].Conclusion == "cancelled"
	})
	h.block.unblock()
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 4); !merged || at != head2 {
		t.Errorf("merged %v at %s, want the new head", merged, at)
	}
	golden(t, "push-cancels-running-check", cancelAfterCreate(h.transcript([]int{4}), 2))
}

// cancelAfterCreate puts the request that cancels check run id (its second PATCH) right after the
// request creating the next check run. The two race by design: a new push creates its check run at once
// and the superseded check stops on its own time, so their order is not part of a golden file (on a
// loaded machine the cancel sometimes reaches GitHub first); every other request keeps its place.
func cancelAfterCreate(transcript string, id int) string {
	lines := strings.Split(transcript, "\n")
	patch := fmt.Sprintf("PATCH /repos/octo/catalog/check-runs/%d 200", id)
	const create = "POST /repos/octo/catalog/check-runs 201"
	var patches, creates []int
	for i, l := range lines {
		switch l {
		case patch:
			patches = append(patches, i)
		case create:
			creates = append(creates, i)
		}
	}
	if len(patches) < 2 || len(creates) < 2 {
		return transcript // not the expected shape: the comparison shows the difference
	}
	cancel := lines[patches[1]]
	rest := append(append([]string(nil), lines[:patches[1]]...), lines[patches[1]+1:]...)
	at := creates[1]
	if patches[1] < at {
		at-- // the create moved up one line
	}
	out := append(append(append([]string(nil), rest[:at+1]...), cancel), rest[at+1:]...)
	return strings.Join(out, "\n")
}

// Re-requesting the check suite runs the checks again; the readiness comment is edited, not re-posted.
func TestCheckSuiteRerequested(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(5, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(5, "alice", head, main, nil))
	h.waitIdle()
	h.deliver("check_suite", "check_suite/rerequested.payload.json", repoEdits(map[string]any{
		"check_suite.head_sha": head, "check_suite.pull_requests": []any{map[string]any{"number": 5, "id": 5,
			"url": "https://api.github.com/repos/octo/catalog/pulls/5", "head": map[string]any{"ref": "alice/change-5", "sha": head},
			"base": map[string]any{"ref": "main", "sha": main}}},
	}))
	h.waitIdle()
	h.deliver("check_run", "check_run/rerequested.payload.json", repoEdits(map[string]any{"check_run.head_sha": head,
		"check_run.pull_requests": []any{}}))
	h.waitIdle()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 3 {
		t.Fatalf("%d check runs, want 3 (opened, check suite and check run re-requested)", len(runs))
	}
	if cs := h.gh.Comments(repoFull, 5); len(cs) != 1 || cs[0].Edits == 0 {
		t.Errorf("comments %+v: want one comment, edited", cs)
	}
	golden(t, "check-suite-rerequested", h.transcript([]int{5}))
}

// A registry that cannot be reached is an infrastructure failure: a failed check run saying so (not the
// author's fault), nothing merged.
func TestRegistryDown(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	dead := deadRegistry(t)
	files := map[string]string{"catalog/foo-operator/catalog.json": fbc("foo-operator", func(v string) string {
		if v == "0.1.0" {
			return h.bundleImage("foo-operator", v)
		}
		return dead + "/ops/foo-operator-bundle@sha256:" + strings.Repeat("0", 64)
	}, "0.1.0", "0.2.0")}
	head := h.label(h.git.Commit("alice/foo", main, "alice", "foo v0.2.0", files), "HEAD")
	h.openPR(6, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(6, "alice", head, main, nil))
	h.waitIdle()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Output.Title, "Infrastructure") {
		t.Fatalf("check runs: %+v", runs)
	}
	if merged, _ := h.gh.Merged(repoFull, 6); merged {
		t.Error("merged although the images could not be checked")
	}
	golden(t, "registry-down", strings.ReplaceAll(h.transcript([]int{6}), dead, "DEAD-REGISTRY"))
}

// GitHub answering 500, 502 and 429 before succeeding changes nothing: the same check run, comment and
// single merge.
func TestGitHubFailuresThenSuccess(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(7, "alice", head, main)
	h.gh.FailNext("GET", "/repos/octo/catalog/pulls/7", 500, 2)
	h.gh.FailNext("POST", "/repos/octo/catalog/check-runs", 502, 1)
	h.gh.FailNext("PATCH", "/repos/octo/catalog/check-runs/", 502, 1)
	h.gh.FailNext("GET", "/repos/octo/catalog/issues/7/comments", 429, 1)
	h.gh.FailNext("PUT", "/repos/octo/catalog/pulls/7/merge", 503, 1)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(7, "alice", head, main, nil))
	h.waitIdle()
	var merges int
	for _, r := range h.gh.Requests() {
		if r.Method == "PUT" && strings.HasSuffix(r.Path, "/merge") && r.Status == 200 {
			merges++
		}
	}
	if merges != 1 {
		t.Errorf("%d successful merges, want 1", merges)
	}
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Errorf("check runs: %+v", runs)
	}
	golden(t, "github-failures-then-success", h.transcript([]int{7}))
}

// The base branch moved after the check: the check was of the merge into the old tip, so before merging
// the checks run again on the merge into the new tip (bors' rule), whatever the move changed, and the
// pull request merges on that second check without its branch being updated. (A move whose merge does
// not pass is TestAttackBranchBehindTheBase.)
func TestBaseMoved(t *testing.T) {
	for _, pkg := range []string{"foo-operator", "bar-operator"} {
		name := map[string]string{"foo-operator": "same-package", "bar-operator": "other-package"}[pkg]
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
			head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
			h.openPR(8, "alice", head, main)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(8, "alice", head, main, nil))
			h.waitIdle()
			file := "catalog/" + pkg + "/catalog.json"
			moved := h.label(h.git.Commit("main", "", "catalog-admin", "describe "+pkg, map[string]string{
				file: strings.Replace(h.catalogFiles(map[string][]string{pkg: {"0.1.0"}})[file], `"defaultChannel": "stable"`,
					`"defaultChannel": "stable",`+"\n"+`  "description": "described on main"`, 1)}), "MOVED")
			h.gh.SetRef(repoFull, "heads/main", moved)
			h.addLabel(8, "lgtm", head, main)
			h.waitIdle()
			if merged, at := h.gh.Merged(repoFull, 8); !merged || at != head {
				t.Fatalf("merged %v at %s", merged, at)
			}
			runs := h.gh.CheckRuns(repoFull)
			if len(runs) != 2 || runs[1].Conclusion != "success" {
				t.Fatalf("check runs: want the check of the merge into main and the check of the merge into its new tip: %+v", runs)
			}
			golden(t, "base-moved-"+name, h.transcript([]int{8}))
		})
	}
}

// A merge queue group whose pull request meets every merge condition (GitHub refused the bot's own merge,
// as it does when the branch requires the merge queue) is checked on the group's head and passes.
func TestMergeGroup(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	pr := h.label(h.releaseFoo("alice/foo", main, "alice"), "PR")
	h.gh.FailNext("PUT", "/repos/octo/catalog/pulls/9/merge", http.StatusMethodNotAllowed, 1)
	h.openPR(9, "alice", pr, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(9, "alice", pr, main, nil))
	h.waitIdle()
	head := h.label(h.releaseFoo("gh-readonly-queue/main/pr-9", main, "github"), "GROUP")
	h.deliverGroup(head, main, "refs/heads/gh-readonly-queue/main/pr-9-"+pr)
	h.waitIdle()
	runs := h.checkRunsOn(head)
	if len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Fatalf("the group's check runs: %+v", runs)
	}
	golden(t, "merge-group", h.transcript(nil))
}

// A push to the default branch that changes the catalog publishes its image and records the digest as a
// commit status; a push whose catalog does not validate fails without moving the tag.
func TestPushPublishes(t *testing.T) {
	h := newHarness(t)
	base := registrytest.PushBase(t, h.reg.Host)
	target := h.reg.Host + "/ops/catalog:latest"
	cfg := repoConfig + "publish:\n  image: " + target + "\n  base: " + base + "\n"
	main := h.seedMain(cfg)
	after := h.label(h.releaseFoo("main", main, "catalog-admin"), "AFTER")
	pushEdits := func(before, after string) map[string]any {
		return repoEdits(map[string]any{"ref": "refs/heads/main", "before": before, "after": after, "deleted": false,
			"created": false, "base_ref": nil, "repository.master_branch": "main"})
	}
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitIdle()
	sts := h.gh.Statuses(repoFull, after)
	if len(sts) != 2 || sts[1].State != "success" || !strings.HasPrefix(sts[1].Description, "pushed sha256:") {
		t.Fatalf("statuses: %+v", sts)
	}
	published := strings.TrimPrefix(sts[1].Description, "pushed ")
	if got := digestOf(t, target); got != published {
		t.Errorf("%s is at %s, want the published %s", target, got, published)
	}
	// An invalid catalog: two channel heads.
	broken := h.label(h.git.Commit("main", "", "catalog-admin", "broken", map[string]string{
		"catalog/foo-operator/catalog.json": strings.Replace(fbc("foo-operator", func(v string) string { return h.bundleImage("foo-operator", v) },
			"0.1.0", "0.2.0"), `"replaces": "foo-operator.v0.1.0"`, `"skips": ["x"]`, 1)}), "BROKEN")
	h.deliver("push", "push/payload.json", pushEdits(after, broken))
	h.waitIdle() // handled before the next push, or it would publish that push's tip
	// A push that does not touch the catalog publishes nothing.
	docs := h.label(h.git.Commit("main", "", "catalog-admin", "docs", map[string]string{"README.md": "hello\n"}), "DOCS")
	h.deliver("push", "push/payload.json", pushEdits(broken, docs))
	h.waitIdle()
	if sts := h.gh.Statuses(repoFull, broken); len(sts) != 2 || sts[1].State != "failure" {
		t.Errorf("statuses of the broken push: %+v", sts)
	}
	if got := digestOf(t, target); got != published {
		t.Errorf("a failed publish moved %s to %s", target, got)
	}
	if sts := h.gh.Statuses(repoFull, docs); len(sts) != 0 {
		t.Errorf("a push without catalog changes got statuses %+v", sts)
	}
	golden(t, "push-publishes", h.transcript(nil, after, broken))
}

func digestOf(t *testing.T, ref string) string {
	t.Helper()
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(r)
	if err != nil {
		t.Fatal(err)
	}
	return desc.Digest.String()
}

// Diagnostics become annotations, sent 50 per request (GitHub's limit); the fake accumulates them as
// GitHub does.
func TestManyAnnotationsAreBatched(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	var b strings.Builder
	b.WriteString(`{"schema": "olm.package", "name": "baz-operator", "defaultChannel": "stable"}` + "\n")
	var entries []string
	for i := range 120 {
		entries = append(entries, fmt.Sprintf(`{"name": "baz-operator.v0.0.%d"}`, i))
	}
	b.WriteString(`{"schema": "olm.channel", "name": "stable", "package": "baz-operator", "entries": [` + strings.Join(entries, ", ") + "]}\n")
	for i := range 120 {
		// no olm.package property: invalid, one diagnostic per bundle, each on its own line
		fmt.Fprintf(&b, `{"schema": "olm.bundle", "name": "baz-operator.v0.0.%d", "package": "baz-operator", "image": "%s/ops/baz@sha256:%064d", "properties": []}`+"\n",
			i, h.reg.Host, i)
	}
	head := h.label(h.git.Commit("admin/baz", main, "catalog-admin", "add baz", map[string]string{"catalog/baz-operator/catalog.json": b.String()}), "HEAD")
	h.openPR(10, "catalog-admin", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(10, "catalog-admin", head, main, nil))
	h.waitIdle()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Fatalf("check runs: %+v", runs)
	}
	n := len(runs[0].Output.Annotations)
	patches := 0
	for _, r := range h.gh.Requests() {
		if r.Method == "PATCH" && strings.Contains(r.Path, "/check-runs/") {
			c := strings.Count(r.Body, `"annotation_level"`)
			if c > 50 {
				t.Errorf("a request carried %d annotations", c)
			}
			if c > 0 {
				patches++
			}
		}
	}
	if n < 120 || patches != (n+49)/50 {
		t.Errorf("%d annotations in %d requests carrying annotations, want at least 120 in ceil(n/50)", n, patches)
	}
}

// An owner's approving review re-runs a check the owners stage failed, and the pull request merges;
// /retest by the author runs the checks once more (a 👍, a new check run).
func TestReviewApprovesAndRetest(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head := h.label(h.releaseFoo("mallory/foo", main, "mallory"), "HEAD")
	h.openPR(11, "mallory", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(11, "mallory", head, main, nil))
	h.waitIdle()
	h.comment(11, "mallory", "/retest")
	h.waitIdle()
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 2 || runs[1].Conclusion != "failure" {
		t.Fatalf("after /retest: %+v", runs)
	}
	h.gh.AddReview(repoFull, 11, githubtest.Review{User: "alice", State: "APPROVED"})
	h.deliver("pull_request_review", "pull_request_review/submitted.payload.json", prEdits(11, "mallory", head, main,
		map[string]any{"review.state": "approved", "review.user.login": "alice", "sender.login": "alice"}))
	h.waitIdle()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 3 || runs[2].Conclusion != "success" {
		t.Fatalf("after alice's review: %+v", runs)
	}
	h.addLabel(11, "lgtm", head, main)
	h.waitIdle()
	if merged, at := h.gh.Merged(repoFull, 11); !merged || at != head {
		t.Errorf("merged %v at %s", merged, at)
	}
	var reactions []string
	for _, c := range h.gh.Comments(repoFull, 11) {
		for _, r := range c.Reactions {
			reactions = append(reactions, c.Body+":"+r.Content)
		}
	}
	if fmt.Sprint(reactions) != "[/retest:+1]" {
		t.Errorf("reactions %v", reactions)
	}
}

func TestCancelAfterCreate(t *testing.T) {
	const want = "a\nPOST /repos/octo/catalog/check-runs 201\nPATCH /repos/octo/catalog/check-runs/2 200\nb\n" +
		"POST /repos/octo/catalog/check-runs 201\nPATCH /repos/octo/catalog/check-runs/2 200\nc\nd"
	for _, got := range []string{
		want,
		"a\nPOST /repos/octo/catalog/check-runs 201\nPATCH /repos/octo/catalog/check-runs/2 200\nb\n" +
			"PATCH /repos/octo/catalog/check-runs/2 200\nPOST /repos/octo/catalog/check-runs 201\nc\nd",
		"a\nPOST /repos/octo/catalog/check-runs 201\nPATCH /repos/octo/catalog/check-runs/2 200\nb\n" +
			"POST /repos/octo/catalog/check-runs 201\nc\nPATCH /repos/octo/catalog/check-runs/2 200\nd",
	} {
		if out := cancelAfterCreate(got, 2); out != want {
			t.Errorf("cancelAfterCreate(%q) =\n%q, want\n%q", got, out, want)
		}
	}
}
