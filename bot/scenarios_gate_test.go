package bot

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/ghaction"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// One merge decision (issue 22 item 4): the same pull requests, under the same .catalogbot.yaml, through
// both front-ends (the bot: its real handler, GitHub's real payloads and the OpenAPI-checked fake GitHub;
// the Action: its Run with a runner's environment against its own fake GitHub) end in the same decision,
// and the unmet conditions of the bot's readiness comment are those of the Action's step summary.

// gateScenario is a pull request of foo-operator v0.2.0 in a given state when both front-ends decide.
type gateScenario struct {
	name, config, author string
	labels               []string
	// reviews are on the head unless CommitID is "old" (the head before the last push).
	reviews   []githubtest.Review
	perms     map[string]string
	mergeable *bool
	// retarget: checked against release-0.1 (cut before .catalogbot.yaml existed), now targeting main.
	retarget bool
	// moveBase, when set, are the files main's next commit changes after the check and before the
	// decision (the configuration requires the lgtm label, set only then, so nothing merges earlier).
	moveBase func(h *harness) map[string]string
	// rerun: the move changes the rules; the bot runs the checks again under them, the Action checks under
	// them at once (the decision is the same, the unmet conditions are not compared).
	rerun  bool
	merged bool
	// unmet are substrings of the unmet conditions, in order (both front-ends must list exactly these).
	unmet []string
}

func gateScenarios() []gateScenario {
	no := false
	one := repoConfig + "  requiredApprovals: 1\n"
	lgtm := repoConfig + "  requiredLabels: [lgtm]\n"
	approved := func(users ...string) []githubtest.Review {
		var out []githubtest.Review
		for _, u := range users {
			out = append(out, githubtest.Review{User: u, State: "APPROVED"})
		}
		return out
	}
	return []gateScenario{
		{name: "owner-no-rules", config: repoConfig, author: "alice", merged: true},
		{name: "sock-puppet-approval", config: one, author: "alice", reviews: approved("alice-puppet"), unmet: []string{"0 of 1 required approvals"}},
		{name: "writer-under-owners", config: one, author: "alice", reviews: approved("wendy"), perms: map[string]string{"wendy": "write"},
			unmet: []string{"0 of 1 required approvals"}},
		{name: "writer-under-write", config: one + "  approvers: write\n", author: "alice", reviews: approved("wendy"),
			perms: map[string]string{"wendy": "write"}, merged: true},
		{name: "owner-of-another-package", config: one, author: "alice", reviews: approved("bob"), unmet: []string{"0 of 1 required approvals"}},
		{name: "maintainer-approval", config: one, author: "alice", reviews: approved("catalog-admin"), merged: true},
		{name: "author-approves-self", config: strings.Replace(one, "maintainers: [catalog-admin]", "maintainers: [catalog-admin, alice]", 1),
			author: "alice", reviews: approved("alice"), unmet: []string{"0 of 1 required approvals"}},
		{name: "approval-on-old-head", config: one, author: "alice", reviews: []githubtest.Review{{User: "catalog-admin", State: "APPROVED", CommitID: "old"}},
			unmet: []string{"0 of 1 required approvals"}},
		{name: "changes-requested-after-approval", config: one, author: "alice",
			reviews: []githubtest.Review{{User: "catalog-admin", State: "APPROVED"}, {User: "catalog-admin", State: "CHANGES_REQUESTED"}},
			unmet:   []string{"0 of 1 required approvals"}},
		{name: "hold-label", config: repoConfig, author: "alice", labels: []string{"do-not-merge/hold"}, unmet: []string{"on hold"}},
		{name: "required-label-missing", config: repoConfig + "  requiredLabels: [lgtm]\n", author: "alice", unmet: []string{"label `lgtm` is required"}},
		{name: "required-label-set", config: repoConfig + "  requiredLabels: [lgtm]\n", author: "alice", labels: []string{"lgtm"}, merged: true},
		{name: "merge-conflict", config: repoConfig, author: "alice", mergeable: &no, unmet: []string{"merge conflicts"}},
		{name: "not-an-owner", config: repoConfig, author: "mallory", unmet: []string{"did not pass on"}},
		{name: "broken-base-config", config: strings.Replace(one, "maintainers:", "maintainer:", 1), author: "alice",
			reviews: approved("catalog-admin"), unmet: []string{"did not pass on", "is invalid"}},
		{name: "retarget-after-check", config: one, author: "mallory", retarget: true},
		// The base branch moves between the check and the decision (issues 23, 33): the check was of the
		// merge into the old tip, so the bot checks the merge into the new tip before anything merges (the
		// Action reads the tip when it starts, and checks that merge); what the move changed decides only
		// through that check.
		{name: "base-moved-other-package", config: lgtm, author: "alice", merged: true,
			moveBase: func(h *harness) map[string]string {
				return h.catalogFiles(map[string][]string{"bar-operator": {"0.1.0", "0.2.0"}})
			}},
		{name: "base-moved-same-package", config: lgtm, author: "alice", merged: true,
			moveBase: func(h *harness) map[string]string {
				return map[string]string{"catalog/foo-operator/deprecations.json": deprecation("foo-operator", "olm.bundle", "foo-operator.v0.1.0")}
			}},
		{name: "base-moved-rules", config: lgtm, author: "alice", rerun: true,
			moveBase: func(h *harness) map[string]string {
				return map[string]string{".catalogbot.yaml": strings.Replace(lgtm, "foo-operator: [alice]", "foo-operator: [carol]", 1)}
			}},
	}
}

func TestMergeDecisionScenarios(t *testing.T) {
	for _, sc := range gateScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			h := newHarness(t)
			state := seedScenario(h, h.gh, sc)
			botMerged, botUnmet := botDecides(h, sc, state)
			actMerged, actUnmet := actionDecides(t, h, sc, state)
			if botMerged != sc.merged || actMerged != sc.merged {
				t.Fatalf("merged: bot %v, Action %v, want %v\nbot: %v\nAction: %v", botMerged, actMerged, sc.merged, botUnmet, actUnmet)
			}
			t.Logf("bot %v %q; Action %v %q", botMerged, botUnmet, actMerged, actUnmet)
			if sc.merged || sc.retarget || sc.rerun { // the bot checks again (against main, under the new rules); the Action refuses
				return
			}
			if !slices.Equal(botUnmet, actUnmet) {
				t.Errorf("unmet conditions differ:\nbot:    %q\nAction: %q", botUnmet, actUnmet)
			}
			if len(botUnmet) != len(sc.unmet) {
				t.Fatalf("unmet %q, want %q", botUnmet, sc.unmet)
			}
			for i, want := range sc.unmet {
				if !strings.Contains(botUnmet[i], want) {
					t.Errorf("unmet condition %d is %q, want it to say %q", i, botUnmet[i], want)
				}
			}
		})
	}
}

type scenarioState struct {
	base, rel, old, head string
	moved                string // main after the move (moveBase)
}

// seedScenario commits the scenario's branches in the harness's git repository (both front-ends read it).
func seedScenario(h *harness, gh *githubtest.Server, sc gateScenario) scenarioState {
	var s scenarioState
	files := h.catalogFiles(map[string][]string{"foo-operator": {"0.1.0"}, "bar-operator": {"0.1.0"}})
	s.rel = h.git.Commit("release-0.1", "", "catalog-admin", "release 0.1", files)
	s.base = h.git.Commit("main", s.rel, "catalog-admin", "rules", map[string]string{".catalogbot.yaml": sc.config})
	parent := s.base
	if sc.retarget {
		parent = s.rel
	}
	if sc.moveBase != nil {
		s.moved = h.git.Commit("moved-main", s.base, "catalog-admin", "main moves on", sc.moveBase(h))
	}
	s.old = h.releaseFoo(sc.author+"/foo", parent, sc.author)
	s.head = h.git.Commit(sc.author+"/foo", "", sc.author, "describe foo", h.describedFoo())
	return s
}

// seedGitHub seeds a fake GitHub with the scenario's branches, pull request 40, reviews and permissions.
func seedGitHub(gh *githubtest.Server, sc gateScenario, s scenarioState) {
	gh.AddRepo(repoFull)
	gh.SetRef(repoFull, "heads/release-0.1", s.rel)
	gh.SetRef(repoFull, "heads/main", s.base)
	pr := githubtest.PullRequest{Number: 40, User: sc.author, HeadSHA: s.head, HeadRef: sc.author + "/foo", BaseRef: "main", BaseSHA: s.base,
		Title: "foo v0.2.0", Labels: sc.labels}
	if sc.retarget {
		pr.BaseRef, pr.BaseSHA = "release-0.1", s.rel
	}
	gh.AddPullRequest(repoFull, pr)
	for _, rv := range sc.reviews {
		if rv.CommitID == "old" {
			rv.CommitID = s.old
		} else {
			rv.CommitID = s.head
		}
		gh.AddReview(repoFull, 40, rv)
	}
	for u, p := range sc.perms {
		gh.SetPermission(repoFull, u, p)
	}
	if sc.mergeable != nil {
		gh.SetMergeable(repoFull, 40, sc.mergeable)
	}
}

var detailsLink = regexp.MustCompile(` \(\[details\]\([^)]*\)\)`)

// unmetLines are the unmet conditions of a markdown list of conditions, without links to run pages.
func unmetLines(md string) []string {
	var out []string
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "- [ ] ") {
			out = append(out, detailsLink.ReplaceAllString(strings.TrimPrefix(l, "- [ ] "), ""))
		}
	}
	return out
}

func botDecides(h *harness, sc gateScenario, s scenarioState) (bool, []string) {
	h.t.Helper()
	seedGitHub(h.gh, sc, s)
	h.git.SetPull(40, s.head)
	base := s.base
	if sc.retarget {
		base = s.rel
		h.comment(40, sc.author, "/hold") // else it merges into release-0.1 at once
		h.waitIdle()
	}
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(40, sc.author, s.head, base, map[string]any{"pull_request.base.ref": map[bool]string{true: "release-0.1", false: "main"}[sc.retarget]}))
	h.waitIdle()
	if sc.moveBase != nil {
		h.gh.SetRef(repoFull, "heads/main", s.moved)
		h.addLabel(40, "lgtm", s.head, base)
		h.waitIdle()
	}
	if sc.retarget {
		h.retarget(40, sc.author, s.head, "release-0.1", "main")
		h.waitIdle()
		h.comment(40, sc.author, "/unhold")
		h.waitIdle()
	}
	merged, _ := h.gh.Merged(repoFull, 40)
	return merged, unmetLines(h.readiness(40))
}

func actionDecides(t *testing.T, h *harness, sc gateScenario, s scenarioState) (bool, []string) {
	t.Helper()
	gh := githubtest.New(t)
	if sc.moveBase != nil { // checked at s.base, decided with main moved and the label set
		sc.labels = append(slices.Clone(sc.labels), "lgtm")
	}
	seedGitHub(gh, sc, s)
	if sc.moveBase != nil {
		gh.SetRef(repoFull, "heads/main", s.moved)
	}
	base, ref := s.base, "main"
	if sc.retarget { // the run was of release-0.1; the pull request now targets main
		base, ref = s.rel, "release-0.1"
		gh.SetBase(repoFull, 40, "main")
	}
	tmp := t.TempDir()
	env := map[string]string{
		"GITHUB_EVENT_NAME": "pull_request_target",
		"GITHUB_EVENT_PATH": githubtest.PayloadFile(t, "pull_request/opened.payload.json", prEdits(40, sc.author, s.head, base,
			map[string]any{"pull_request.base.ref": ref})),
		"GITHUB_OUTPUT": filepath.Join(tmp, "out"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary"),
		"GITHUB_API_URL": gh.URL, "CATALOGBOT_GITHUB_TOKEN": "ghs_x",
	}
	var stdout bytes.Buffer
	if _, err := ghaction.Run(context.Background(), func(k string) string { return env[k] }, &stdout, &bytes.Buffer{},
		ghaction.Options{RepoDir: h.git.Dir, SkipImages: true, Merge: true}); err != nil {
		t.Fatalf("action: %v\n%s", err, stdout.String())
	}
	summary, err := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	if err != nil {
		t.Fatal(err)
	}
	merged, _ := gh.Merged(repoFull, 40)
	return merged, unmetLines(string(summary))
}
