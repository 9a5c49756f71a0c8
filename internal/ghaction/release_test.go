package ghaction

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/report"
)

const (
	releaseFull   = "Codertocat/Hello-World" // the repository of the shared push payload
	releaseBranch = "catalogbot/release/" + shareddata.ReleasePackage + "-" + shareddata.ReleaseVersion
)

// releaseWorld is a workflow's checkout of a template-driven repository whose main went from kube-green's
// templates (before) to its bundle 0.7.2 merged with a release-config.yaml (after), its origin (a bare
// repository standing in for GitHub's git service), the fake GitHub serving the origin's branches, and a
// registry for the bundle images (release.bundleImage: HOST/pipeline/{package}:{version}).
type releaseWorld struct {
	t              *testing.T
	dir, origin    string
	before, after  string
	gh             *githubtest.Server
	reg            *registrytest.Registry
	git            *testGit
	bundleImageTag string
}

// newReleaseWorld builds the world; bundle are the files the merged push adds (shareddata.ReleaseBundle
// when nil), wrap wraps the registry's handler.
func newReleaseWorld(t *testing.T, bundle map[string]string, wrap func(http.Handler) http.Handler) *releaseWorld {
	t.Helper()
	w := &releaseWorld{t: t, dir: t.TempDir(), origin: t.TempDir(), gh: githubtest.New(t), reg: registrytest.New(t, wrap)}
	w.bundleImageTag = w.reg.Host + "/pipeline/kube-green:0.7.2"
	w.git = newTestGit(t, w.dir, "main")
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\ncatalogs:\n  pattern: catalogs/{version}\n" +
		"  migrateLevel: bundle-object-to-csv-metadata\n  migrateFrom: v4.17\nrelease:\n  bundleImage: " + w.reg.Host + "/pipeline/{package}:{version}\n"
	files := shareddata.ReleaseTemplates(t)
	files[".catalogbot.yaml"] = cfg
	w.before = w.git.commit("admin", files)
	if bundle == nil {
		bundle = shareddata.ReleaseBundle(t)
	}
	w.after = w.git.commit("davidebianchi", bundle)
	if _, err := git.PlainInit(w.origin, true); err != nil {
		t.Fatal(err)
	}
	if _, err := w.git.repo.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{w.origin}}); err != nil {
		t.Fatal(err)
	}
	if err := w.git.repo.Push(&git.PushOptions{RemoteName: "origin", RefSpecs: []config.RefSpec{"refs/heads/main:refs/heads/main"}}); err != nil {
		t.Fatal(err)
	}
	w.gh.AddRepo(releaseFull)
	w.gh.SetRef(releaseFull, "heads/main", w.after)
	w.gh.ServeBranches(githubtest.Branches{Resolve: func(_, branch string) string { return w.branch(branch) }})
	return w
}

// branch is where branch is in the origin ("" when it does not exist).
func (w *releaseWorld) branch(branch string) string {
	r, err := git.PlainOpen(w.origin)
	if err != nil {
		return ""
	}
	ref, err := r.Reference(plumbing.NewBranchReferenceName(branch), true)
	if err != nil {
		return ""
	}
	return ref.Hash().String()
}

// run runs the action for event with payload, release enabled, and returns its report (nil when it
// stopped with an error), outputs and standard output.
func (w *releaseWorld) run(event, payload string) (*report.Report, map[string]string, string) {
	w.t.Helper()
	tmp := w.t.TempDir()
	env := map[string]string{
		"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": payload, "GITHUB_API_URL": w.gh.URL, "CATALOGBOT_GITHUB_TOKEN": "ghs_workflowtoken",
		"GITHUB_OUTPUT": filepath.Join(tmp, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary.md"),
	}
	var stdout bytes.Buffer
	r, err := Run(context.Background(), func(k string) string { return env[k] }, &stdout, &bytes.Buffer{}, Options{RepoDir: w.dir, SkipImages: true, Release: true})
	if err != nil {
		stdout.WriteString("\nerror: " + err.Error())
	}
	outs := readOutputs(w.t, env["GITHUB_OUTPUT"])
	summary, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	outs["summary"] = string(summary)
	return r, outs, stdout.String()
}

// releasePRs are the fake GitHub's pull requests of the release branch.
func (w *releaseWorld) releasePRs() []githubtest.PullRequest {
	var out []githubtest.PullRequest
	for _, pr := range w.gh.PullRequests(releaseFull) {
		if pr.HeadRef == releaseBranch {
			out = append(out, pr)
		}
	}
	return out
}

// posts counts the requests that opened pull requests.
func (w *releaseWorld) posts() int {
	n := 0
	for _, rq := range w.gh.Requests() {
		if rq.Method == http.MethodPost && rq.Path == "/repos/"+releaseFull+"/pulls" {
			n++
		}
	}
	return n
}

// nothingReleased requires that no bundle image, release branch or pull request exists.
func (w *releaseWorld) nothingReleased(why string) {
	w.t.Helper()
	if prs := w.releasePRs(); len(prs) != 0 || w.posts() != 0 {
		w.t.Errorf("%s: release pull requests %+v (%d opened)", why, prs, w.posts())
	}
	if at := w.branch(releaseBranch); at != "" {
		w.t.Errorf("%s: release branch pushed at %s", why, at)
	}
	tag, _ := name.NewTag(w.bundleImageTag)
	if _, err := remote.Head(tag); err == nil {
		w.t.Errorf("%s: bundle image %s pushed", why, tag)
	}
}

// A push to the default branch merging kube-green 0.7.2 with a release-config.yaml: the bundle image is
// pushed (by digest, then its tag), the release commit (the template change and the three catalogs,
// on the pushed commit) goes on the release branch, one pull request is opened, and the outputs and the
// step summary list it. The same workflow run again opens nothing more and says the same.
func TestActionReleasesTheBundleAPushMerged(t *testing.T) {
	w := newReleaseWorld(t, nil, nil)
	payload := pushPayload(t, w.before, w.after)
	r, outs, stdout := w.run("push", payload)
	if r == nil || r.Verdict() != report.Pass {
		t.Fatalf("verdict %v, outputs %v\n%s", r, outs, stdout)
	}
	tag, _ := name.NewTag(w.bundleImageTag)
	desc, err := remote.Head(tag)
	if err != nil {
		t.Fatalf("bundle image %s not pushed: %v\n%s", tag, err, stdout)
	}
	prs := w.releasePRs()
	if len(prs) != 1 {
		t.Fatalf("%d release pull requests, want 1\n%s", len(prs), stdout)
	}
	pr := prs[0]
	if pr.Title != "Add kube-green 0.7.2 to FBC" || pr.BaseRef != "main" || pr.HeadSHA != w.branch(releaseBranch) {
		t.Errorf("pull request %q into %s at %s; branch at %s", pr.Title, pr.BaseRef, pr.HeadSHA, w.branch(releaseBranch))
	}
	image := w.reg.Host + "/pipeline/kube-green@" + desc.Digest.String()
	url := "https://github.com/" + releaseFull + "/pull/" + strconv.Itoa(pr.Number)
	if want := "kube-green 0.7.2 " + image + " " + url; outs["released"] != want || outs["release_prs"] != strconv.Itoa(pr.Number) || outs["release_failed"] != "" {
		t.Errorf("outputs %v, want released %q", outs, want)
	}
	if !strings.Contains(pr.Body, image) || !strings.Contains(pr.Body, pr.HeadSHA) || !strings.Contains(pr.Body, w.after) {
		t.Errorf("pull request body:\n%s", pr.Body)
	}
	if !strings.Contains(outs["summary"], "| `"+shareddata.ReleaseDir+"` | `"+image+"` | [#"+strconv.Itoa(pr.Number)+"]("+url+") |") {
		t.Errorf("step summary:\n%s", outs["summary"])
	}
	// The release commit: on the pushed commit, the template and the three catalogs, and nothing else.
	c, err := w.git.repo.CommitObject(plumbing.NewHash(pr.HeadSHA))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ParentHashes) != 1 || c.ParentHashes[0].String() != w.after || !strings.HasPrefix(c.Message, "Add kube-green 0.7.2 to FBC\n") {
		t.Fatalf("release commit parents %v, message %q", c.ParentHashes, c.Message)
	}
	parent, _ := c.Parent(0)
	patch, err := parent.Patch(c)
	if err != nil {
		t.Fatal(err)
	}
	var changed []string
	for _, fp := range patch.FilePatches() {
		_, to := fp.Files()
		changed = append(changed, to.Path())
	}
	want := []string{"catalogs/v4.19/kube-green/catalog.yaml", "catalogs/v4.20/kube-green/catalog.yaml", "catalogs/v4.21/kube-green/catalog.yaml",
		"operators/kube-green/catalog-templates/basic-template.yaml"}
	if strings.Join(changed, "\n") != strings.Join(want, "\n") {
		t.Errorf("the release commit changes %v", changed)
	}
	if !strings.Contains(patch.String(), "+  image: "+w.bundleImageTag+"\n") {
		t.Errorf("the template does not name %s:\n%s", w.bundleImageTag, patch)
	}

	// The workflow run again (re-run, or the same push delivered twice): the branch and its pull request
	// are found, the tag already holds the image; nothing new is opened or pushed.
	r, again, stdout := w.run("push", payload)
	if r == nil || r.Verdict() != report.Pass || again["released"] != outs["released"] || again["release_prs"] != outs["release_prs"] {
		t.Fatalf("re-run: outputs %v, want released %q\n%s", again, outs["released"], stdout)
	}
	if n := len(w.releasePRs()); n != 1 || w.posts() != 1 || w.branch(releaseBranch) != pr.HeadSHA {
		t.Fatalf("re-run: %d release pull requests, %d opened, branch at %s", n, w.posts(), w.branch(releaseBranch))
	}
	if d, _ := remote.Head(tag); d.Digest != desc.Digest {
		t.Fatalf("re-run moved %s to %s", tag, d.Digest)
	}
}

// A registry failing (503 on every write) and then GitHub failing (5xx on opening pull requests) each end
// the run with verdict error naming the bundle; no pull request exists whose templates name an image that
// was not pushed, and a run once they answer again releases the bundle with one pull request.
func TestActionReleaseFailuresNameTheBundle(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	w := newReleaseWorld(t, nil, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
			if down.Load() && req.Method != http.MethodGet && req.Method != http.MethodHead {
				http.Error(rw, "registry is down", http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(rw, req)
		})
	})
	payload := pushPayload(t, w.before, w.after)
	r, outs, stdout := w.run("push", payload)
	if r == nil || r.Verdict() != report.Error || outs["verdict"] != "error" || outs["release_failed"] != shareddata.ReleaseDir ||
		!strings.Contains(stdout, "release "+shareddata.ReleaseDir+": ") || !strings.Contains(stdout, "503") {
		t.Fatalf("registry down: outputs %v\n%s", outs, stdout)
	}
	w.nothingReleased("registry down")

	down.Store(false)
	// 4: the client's create and its three tries after looking for what an unsure answer may have opened
	w.gh.FailNext(http.MethodPost, "/repos/"+releaseFull+"/pulls", http.StatusBadGateway, 4)
	r, outs, stdout = w.run("push", payload)
	if r == nil || r.Verdict() != report.Error || outs["release_failed"] != shareddata.ReleaseDir || !strings.Contains(stdout, "release "+shareddata.ReleaseDir+": ") {
		t.Fatalf("GitHub down: outputs %v\n%s", outs, stdout)
	}
	if prs := w.releasePRs(); len(prs) != 0 {
		t.Fatalf("GitHub down: pull requests %+v", prs)
	}
	// what was written is the image, then the branch naming it: a pull request of it would name a pushed image
	tag, _ := name.NewTag(w.bundleImageTag)
	if _, err := remote.Head(tag); err != nil || w.branch(releaseBranch) == "" {
		t.Fatalf("GitHub down: image %s (%v), branch at %q", tag, err, w.branch(releaseBranch))
	}

	r, outs, stdout = w.run("push", payload)
	if r == nil || r.Verdict() != report.Pass || len(w.releasePRs()) != 1 || outs["release_prs"] == "" {
		t.Fatalf("after the outages: %d release pull requests, outputs %v\n%s", len(w.releasePRs()), outs, stdout)
	}
}
