package ghaction

import (
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/report"
)

// Ways to get a release out of the Action that its rules refuse: a pull request (pull_request or
// pull_request_target) adding a bundle directory with a release-config.yaml, a push to a branch that is
// not the default one, a push creating the default branch. None pushes an image or a branch, or opens a
// pull request, with release: true and a token that could.
func TestActionReleaseAttackOnlyPushesToTheDefaultBranchRelease(t *testing.T) {
	w := newReleaseWorld(t, nil, nil)
	w.gh.SetRef(releaseFull, "heads/main", w.before)
	for i, event := range []string{"pull_request", "pull_request_target"} {
		n := 40 + i
		w.gh.AddPullRequest(releaseFull, githubtest.PullRequest{Number: n, User: "davidebianchi", HeadSHA: w.after, BaseRef: "main", BaseSHA: w.before})
		r, outs, stdout := w.run(event, prPayload(t, n, w.before, w.after, "davidebianchi"))
		if r == nil {
			t.Fatalf("%s: %s", event, stdout)
		}
		for _, st := range r.Stages {
			if st.Name == releaseCheck {
				t.Errorf("%s: a release stage ran: %+v", event, st)
			}
		}
		if outs["released"] != "" || outs["release_failed"] != "" {
			t.Errorf("%s: outputs %v", event, outs)
		}
		w.nothingReleased(event)
	}
	w.gh.SetRef(releaseFull, "heads/main", w.after)
	for why, edits := range map[string]map[string]any{
		"refs/heads/feature is not a push to the default branch main": {"ref": "refs/heads/feature"},
		"the push deleted refs/heads/main":                            {"deleted": true},
		"the push created main":                                       {"before": strings.Repeat("0", 40), "created": true},
	} {
		e := map[string]any{"ref": "refs/heads/main", "before": w.before, "after": w.after, "deleted": false, "created": false, "repository.default_branch": "main"}
		for k, v := range edits {
			e[k] = v
		}
		r, _, stdout := w.run("push", githubtest.PayloadFile(t, "push/payload.json", e))
		if r == nil || !hasStage(r, releaseCheck, report.Skipped, "not released: "+why) {
			t.Errorf("push (%s): no skipped release stage saying so\n%s", why, stdout)
		}
		w.nothingReleased(why)
	}
}

func hasStage(r *report.Report, name string, status report.Status, summary string) bool {
	for _, st := range r.Stages {
		if st.Name == name && st.Status == status && st.Summary == summary {
			return true
		}
	}
	return false
}

// A merged bundle directory of a package the default branch has no ci.yaml (nor templates) for, beside
// kube-green's: it is refused, naming it, before its image is built or pushed, and kube-green is
// released all the same.
func TestActionReleaseAttackPackageWithoutCIYAML(t *testing.T) {
	const evil = "operators/evil-operator/1.0.0"
	bundle := shareddata.ReleaseBundle(t)
	for p, c := range shareddata.ReleaseBundle(t) {
		bundle[evil+strings.TrimPrefix(p, shareddata.ReleaseDir)] = c
	}
	w := newReleaseWorld(t, bundle, nil)
	r, outs, stdout := w.run("push", pushPayload(t, w.before, w.after))
	if r == nil || r.Verdict() == report.Pass || r.Verdict() == report.Error || outs["release_failed"] != evil ||
		!strings.Contains(stdout, "release "+evil+": ") {
		t.Fatalf("verdict %v, outputs %v\n%s", r.Verdict(), outs, stdout)
	}
	if !strings.HasPrefix(outs["released"], "kube-green 0.7.2 ") || len(w.releasePRs()) != 1 {
		t.Errorf("kube-green was not released beside it: outputs %v", outs)
	}
	tag, _ := name.NewTag(w.reg.Host + "/pipeline/evil-operator:1.0.0")
	if _, err := remote.Head(tag); err == nil {
		t.Errorf("%s pushed", tag)
	}
	if at := w.branch("catalogbot/release/evil-operator-1.0.0"); at != "" {
		t.Errorf("a release branch of the refused bundle at %s", at)
	}
}

// A released bundle image is never replaced: a tag holding another image refuses the release before any
// branch or pull request, and stays as it was.
func TestActionReleaseAttackNeverReplacesAReleasedTag(t *testing.T) {
	w := newReleaseWorld(t, nil, nil)
	tag, _ := name.NewTag(w.bundleImageTag)
	img, err := random.Image(64, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	held, _ := img.Digest()
	r, outs, stdout := w.run("push", pushPayload(t, w.before, w.after))
	if r == nil || r.Verdict() != report.Fail || outs["release_failed"] != shareddata.ReleaseDir {
		t.Fatalf("outputs %v\n%s", outs, stdout)
	}
	if d, err := remote.Head(tag); err != nil || d.Digest != held {
		t.Fatalf("%s moved to %v (%v)", tag, d, err)
	}
	if len(w.releasePRs()) != 0 || w.branch(releaseBranch) != "" {
		t.Fatalf("released over a held tag: %+v, branch at %s", w.releasePRs(), w.branch(releaseBranch))
	}
}

// Someone created the release branch first (at a commit of theirs, with or without a pull request): the
// Action never overwrites it and never adopts that pull request as its release.
func TestActionReleaseAttackPlantedReleaseBranch(t *testing.T) {
	w := newReleaseWorld(t, nil, nil)
	planted := w.before
	if err := w.git.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/planted", plumbing.NewHash(planted))); err != nil {
		t.Fatal(err)
	}
	if err := w.git.repo.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/planted:refs/heads/" + releaseBranch}}); err != nil {
		t.Fatal(err)
	}
	r, outs, stdout := w.run("push", pushPayload(t, w.before, w.after))
	if r == nil || r.Verdict() != report.ActionRequired || outs["release_failed"] != shareddata.ReleaseDir || !strings.Contains(stdout, "delete the branch") {
		t.Fatalf("planted branch: outputs %v\n%s", outs, stdout)
	}
	if at := w.branch(releaseBranch); at != planted || len(w.releasePRs()) != 0 {
		t.Fatalf("planted branch moved to %s; pull requests %+v", at, w.releasePRs())
	}
	// The planter also opened a pull request of it.
	w.gh.AddPullRequest(releaseFull, githubtest.PullRequest{Number: 9, User: "mallory", HeadSHA: planted, HeadRef: releaseBranch, BaseRef: "main", BaseSHA: w.after})
	r, outs, stdout = w.run("push", pushPayload(t, w.before, w.after))
	if r == nil || r.Verdict() != report.ActionRequired || outs["released"] != "" || !strings.Contains(stdout, "pull request #9") {
		t.Fatalf("planted pull request: outputs %v\n%s", outs, stdout)
	}
	if w.posts() != 0 {
		t.Fatalf("%d pull requests opened", w.posts())
	}
}
