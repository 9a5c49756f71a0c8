package bot

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// autoMergeRules require an approval for every pull request and let the App's releases merge without one.
var autoMergeRules = []string{"  requiredApprovals: 1\n", "  autoMerge: true\n"}

// With release.autoMerge, the App's release pull request, which changes only the package's templates
// and catalogs, passes the owners stage and merges without merge.requiredApprovals; nobody approved it.
func TestReleaseAutoMergeMergesTheAppsRelease(t *testing.T) {
	h, _ := releaseHarness(t)
	main := releaseMain(t, h, autoMergeRules...)
	bundle := mergeBundle(t, h, main)
	h.deliver("push", "push/payload.json", pushEdits(main, bundle))
	h.waitIdleFor(releaseWait)
	pr := oneReleasePR(t, h)
	if merged, at := h.gh.Merged(repoFull, pr.Number); !merged || at != pr.HeadSHA {
		t.Fatalf("the App's release was not merged (%v at %s); check runs %+v\n%s", merged, at, h.gh.CheckRuns(repoFull), h.logs.String())
	}
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].Conclusion != "success" || !strings.Contains(runs[0].Output.Summary, "the App's release of kube-green changes only its templates and catalogs") {
		t.Errorf("check run: %+v", runs)
	}
	if len(h.gh.PullRequest(repoFull, pr.Number).Labels) != 0 {
		t.Errorf("labels: %v", h.gh.PullRequest(repoFull, pr.Number).Labels)
	}
}

// A pull request that looks like the App's release gets nothing the App's own release gets: one from a
// contributor's branch of the same name and title, and one authored by the App's login itself on that
// branch that the App never recorded opening, are judged by the owners and need the approval. Same change
// as the release, same configuration (release.autoMerge, one approval required).
func TestAttackReleaseLookalikePullRequests(t *testing.T) {
	for _, author := range []string{"mallory", "catalogbot[bot]"} {
		t.Run(author, func(t *testing.T) {
			h, p := releaseHarness(t)
			main := releaseMain(t, h, autoMergeRules...)
			bundle := mergeBundle(t, h, main)
			// The release's change, written by hand on the branch the App would use.
			tmplPath := "operators/kube-green/catalog-templates/basic-template.yaml"
			tmpl := h.git.Git("show", bundle+":"+tmplPath)
			edited := strings.Replace(tmpl, "  - name: kube-green.v0.7.1\n    replaces: kube-green.v0.7.0\n",
				"  - name: kube-green.v0.7.1\n    replaces: kube-green.v0.7.0\n  - name: kube-green.v0.7.2\n    replaces: kube-green.v0.7.1\n", 1)
			if edited == tmpl {
				t.Fatalf("the template has no 0.7.1 entry to follow:\n%s", tmpl)
			}
			head := h.label(h.git.Commit(releaseBranch, bundle, author, "Add kube-green 0.7.2 to FBC", map[string]string{tmplPath: edited + "\n"}), "LOOKALIKE")
			h.gh.AddPullRequest(repoFull, githubtest.PullRequest{Number: 7, User: author, HeadSHA: head, BaseSHA: bundle,
				HeadRef: releaseBranch, Title: "Add kube-green 0.7.2 to FBC"})
			h.git.SetPull(7, head)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(7, author, head, bundle,
				map[string]any{"pull_request.head.ref": releaseBranch, "pull_request.title": "Add kube-green 0.7.2 to FBC"}))
			h.waitIdleFor(releaseWait)
			if merged, _ := h.gh.Merged(repoFull, 7); merged {
				t.Fatal("a look-alike of the App's release merged")
			}
			runs := h.gh.CheckRuns(repoFull)
			if len(runs) != 1 || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Output.Summary, "may not change") {
				t.Fatalf("check runs: %+v", runs)
			}
			if tries, _ := p.counts(); tries != 0 {
				t.Errorf("a pull request pushed %d bundle images", tries)
			}
			comments := h.gh.Comments(repoFull, 7)
			if len(comments) != 1 || strings.Contains(comments[0].Body, "no approval needed") || !strings.Contains(comments[0].Body, "approval") {
				t.Errorf("readiness comment: %+v", comments)
			}
		})
	}
}

// A push to the App's release branch (by someone who may push there) makes it an ordinary pull request:
// the check of the new head judges its author, the App, by the owners rules (the App owns nothing), and
// release.autoMerge no longer waives the approval. The release is held by a required label until then.
func TestAttackPushToReleaseBranch(t *testing.T) {
	h, _ := releaseHarness(t)
	main := releaseMain(t, h, "  requiredApprovals: 1\n  requiredLabels: [ok-to-merge]\n", "  autoMerge: true\n")
	bundle := mergeBundle(t, h, main)
	h.deliver("push", "push/payload.json", pushEdits(main, bundle))
	h.waitIdleFor(releaseWait)
	pr := oneReleasePR(t, h)
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Fatalf("the App's release check: %+v\n%s", runs, h.logs.String())
	}
	if merged, _ := h.gh.Merged(repoFull, pr.Number); merged {
		t.Fatal("merged without the required label")
	}
	// mallory adds a line to the release's template on the release branch.
	tmplPath := "operators/kube-green/catalog-templates/basic-template.yaml"
	tmpl := h.git.Git("show", pr.HeadSHA+":"+tmplPath)
	head := h.label(h.git.Commit(releaseBranch, pr.HeadSHA, "mallory", "tweak", map[string]string{tmplPath: tmpl + "\n# mallory was here\n"}), "PUSHED")
	h.push(pr.Number, pr.User, head, bundle)
	h.waitIdleFor(releaseWait)
	h.gh.AddLabel(repoFull, pr.Number, "ok-to-merge")
	h.deliver("pull_request", "pull_request/labeled.payload.json", prEdits(pr.Number, "catalog-admin", head, bundle,
		map[string]any{"label.name": "ok-to-merge", "sender.login": "catalog-admin"}))
	h.waitIdleFor(releaseWait)
	if merged, _ := h.gh.Merged(repoFull, pr.Number); merged {
		t.Fatal("the release branch pushed to by someone else merged as the App's release")
	}
	runs := h.gh.CheckRuns(repoFull)
	last := runs[len(runs)-1]
	if last.HeadSHA != head || last.Conclusion != "failure" || !strings.Contains(last.Output.Summary, "may not change") {
		t.Errorf("the check of the pushed head: %+v", last)
	}
	body := h.gh.Comments(repoFull, pr.Number)[0].Body
	if strings.Contains(body, "no approval needed") {
		t.Errorf("the readiness comment still waives the approval:\n%s", body)
	}
}
