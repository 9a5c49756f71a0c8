package bot

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// fakePusher is a hand-written BundlePusher: it builds the bundle image of a directory with the real
// builder (build/bundleimage) and pushes it with the job's registry options, counting pushes; fail makes
// the next pushes answer a registry's 503 instead.
type fakePusher struct {
	mu     sync.Mutex
	fail   int      // the next fail pushes fail with a 503
	tries  int      // pushes asked for
	pushed []string // the digest references pushed
}

func (p *fakePusher) Push(ctx context.Context, dir, ref string, opts []remote.Option) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tries++
	if p.fail > 0 {
		p.fail--
		return "", &transport.Error{StatusCode: http.StatusServiceUnavailable,
			Errors: []transport.Diagnostic{{Code: transport.UnavailableErrorCode, Message: "registry is down"}}}
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	img, err := bundleimage.Build(ctx, dir)
	if err != nil {
		return "", err
	}
	if err := remote.Write(tag, img, append(opts, remote.WithContext(ctx))...); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	ref = tag.Context().Digest(d.String()).String()
	p.pushed = append(p.pushed, ref)
	return ref, nil
}

// runGit runs git in dir (for the fake GitHub's callbacks, which must not fail the test from its
// handler's goroutine).
func runGit(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

func (p *fakePusher) counts() (tries, pushed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tries, len(p.pushed)
}

const (
	releasePkg    = shareddata.ReleasePackage
	releaseDir    = shareddata.ReleaseDir
	releaseBranch = "catalogbot/release/" + releasePkg + "-" + shareddata.ReleaseVersion
	releaseOwner  = "davidebianchi" // kube-green's ci.yaml reviewer
)

// releaseWait bounds the waits of the release tests: a release job fetches, checks out, pushes an image
// and renders three catalogs, and its retries wait 2 s and 4 s; on a loaded shared machine (load 20 on 2
// cores) one attempt took over 20 s.
const releaseWait = 3 * time.Minute

// releaseCatalogs are the catalogs kube-green's ci.yaml maps its template to in the release world.
var releaseCatalogs = shareddata.ReleaseCatalogs

// releaseHarness is a harness whose bots release with a fakePusher, and whose fake GitHub opens pull
// requests of the branches the bot pushes to the test's git remote.
func releaseHarness(t *testing.T, opts ...harnessOption) (*harness, *fakePusher) {
	t.Helper()
	p := &fakePusher{}
	opts = append([]harnessOption{func(h *harness) {
		h.serveOpts = append(h.serveOpts, WithBundlePusher(p))
		h.cfg.Checks.SkipImages = true // the bundle names images on docker.io
		h.gh.ServeBranches(githubtest.Branches{
			Resolve: func(repo, branch string) string {
				out, err := runGit(h.git.Dir, "rev-parse", "--verify", "-q", "refs/heads/"+branch)
				if err != nil {
					return ""
				}
				return out
			},
			Opened: func(repo string, n int, sha string) {
				if _, err := runGit(h.git.Dir, "update-ref", fmt.Sprintf("refs/pull/%d/head", n), sha); err != nil {
					t.Errorf("refs/pull/%d/head: %v", n, err)
				}
			},
		})
	}}, opts...)
	return newHarness(t, opts...), p
}

// releaseMain seeds main with a template-driven configuration naming bundle images by
// release.bundleImage, and kube-green from the shared data (its template, ci.yaml mapping it to
// v4.19-v4.21, and its committed catalogs there); it returns main. rules are lines added to the
// configuration's merge section, then to its release section.
func releaseMain(t *testing.T, h *harness, rules ...string) string {
	t.Helper()
	rules = append(rules, "", "")
	base := strings.Replace(repoConfig, "merge:\n  method: squash\n", "merge:\n  method: squash\n"+rules[0], 1)
	cfg := base + "catalogs:\n  pattern: catalogs/{version}\n  image: " + h.reg.Host + "/ops/index:{version}\n" +
		"  migrateLevel: bundle-object-to-csv-metadata\n  migrateFrom: v4.17\npublish:\n  base: " + registrytest.PushBase(t, h.reg.Host) +
		"\nrelease:\n  bundleImage: " + h.reg.Host + "/pipeline/{package}:{version}\n" + rules[1]
	seeded := h.seedMain(cfg)
	main := h.label(h.git.Commit("main", seeded, "catalog-admin", releasePkg, shareddata.ReleaseTemplates(t)), "MAIN2")
	h.gh.SetRef(repoFull, "heads/main", main)
	return main
}

// mergeBundle commits kube-green 0.7.2 on main (its bundle pull request merged) and returns the commit.
func mergeBundle(t *testing.T, h *harness, main string) string {
	t.Helper()
	after := h.label(h.git.Commit("main", main, releaseOwner, "operator kube-green (0.7.2)", shareddata.ReleaseBundle(t)), "BUNDLE")
	h.gh.SetRef(repoFull, "heads/main", after)
	return after
}

func pushEdits(before, after string) map[string]any {
	return repoEdits(map[string]any{"ref": "refs/heads/main", "before": before, "after": after, "deleted": false,
		"created": false, "base_ref": nil, "repository.master_branch": "main"})
}

// releasePRs are the pull requests of the release branch.
func releasePRs(h *harness) []githubtest.PullRequest {
	var out []githubtest.PullRequest
	for _, pr := range h.gh.PullRequests(repoFull) {
		if pr.HeadRef == releaseBranch {
			out = append(out, pr)
		}
	}
	return out
}

// oneReleasePR requires exactly one release pull request, titled and authored as the App's, whose head is
// the release branch's commit, and returns it.
func oneReleasePR(t *testing.T, h *harness) githubtest.PullRequest {
	t.Helper()
	prs := releasePRs(h)
	if len(prs) != 1 {
		t.Fatalf("%d release pull requests, want 1: %+v\n%s", len(prs), prs, h.logs.String())
	}
	pr := prs[0]
	if pr.Title != "Add kube-green 0.7.2 to FBC" || pr.User != "catalogbot[bot]" || pr.BaseRef != "main" {
		t.Errorf("release pull request: title %q by %s into %s", pr.Title, pr.User, pr.BaseRef)
	}
	if head := h.git.Git("rev-parse", "refs/heads/"+releaseBranch); pr.HeadSHA != head {
		t.Errorf("pull request head %s, branch at %s", pr.HeadSHA, head)
	}
	return pr
}

// The App's release, end to end: a push merging a bundle directory with a release-config.yaml pushes the
// bundle image, opens one pull request with the template change and the rendered catalogs, which is
// checked like any other (the package's owner approves it), merged, and its push republishes the catalogs.
func TestReleaseOpensCheckedPRThatMergesAndRepublishes(t *testing.T) {
	h, p := releaseHarness(t)
	main := releaseMain(t, h)
	bundle := mergeBundle(t, h, main)
	h.deliver("push", "push/payload.json", pushEdits(main, bundle))
	h.waitIdleFor(releaseWait)

	if tries, pushed := p.counts(); tries != 1 || pushed != 1 || !strings.HasPrefix(p.pushed[0], h.reg.Host+"/pipeline/kube-green@sha256:") {
		t.Fatalf("bundle image pushes: %d tries, %v", tries, p.pushed)
	}
	pr := oneReleasePR(t, h)
	head := h.label(pr.HeadSHA, "RELEASE")
	if parent := h.git.Git("rev-parse", head+"^"); parent != bundle {
		t.Errorf("the release commit's parent is %s, not the push's commit %s", parent, bundle)
	}
	changed := h.git.Git("diff", "--name-only", bundle, head)
	want := []string{"catalogs/v4.19/kube-green/catalog.yaml", "catalogs/v4.20/kube-green/catalog.yaml",
		"catalogs/v4.21/kube-green/catalog.yaml", "operators/kube-green/catalog-templates/basic-template.yaml"}
	if changed != strings.Join(want, "\n") {
		t.Errorf("the release commit changes:\n%s", changed)
	}
	tmpl := h.git.Git("diff", "-U0", bundle, head, "--", "operators/kube-green/catalog-templates/basic-template.yaml")
	for _, line := range []string{"+  - name: kube-green.v0.7.2", "+    replaces: kube-green.v0.7.1", "+- schema: olm.bundle",
		"+  image: " + h.reg.Host + "/pipeline/kube-green:0.7.2"} {
		if !strings.Contains(tmpl+"\n", line+"\n") {
			t.Errorf("the template diff lacks %q:\n%s", line, tmpl)
		}
	}
	if cat := h.git.Git("show", head+":catalogs/v4.21/kube-green/catalog.yaml"); !strings.Contains(cat, "name: kube-green.v0.7.2\n") {
		t.Errorf("the v4.21 catalog does not hold 0.7.2")
	}
	// Checked like any other pull request: the App is no owner of kube-green, so its owner's approval is
	// needed, and nothing merged before it.
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].HeadSHA != head || runs[0].Conclusion != "failure" || !strings.Contains(runs[0].Output.Summary, "owners") {
		t.Fatalf("check runs of the release pull request: %+v\n%s", runs, h.logs.String())
	}
	if merged, _ := h.gh.Merged(repoFull, pr.Number); merged {
		t.Fatal("the release pull request merged without its owner")
	}
	h.review(pr.Number, pr.User, head, bundle, releaseOwner, "APPROVED", head)
	h.waitIdleFor(releaseWait)
	if merged, at := h.gh.Merged(repoFull, pr.Number); !merged || at != head {
		runs = h.gh.CheckRuns(repoFull)
		t.Fatalf("merged %v at %s after the owner's approval; check runs %+v\n%s", merged, at, runs[len(runs)-1].Output, h.logs.String())
	}

	// GitHub lands the merge on main; its push republishes the three catalogs and releases nothing again.
	h.git.SetBranch("main", head)
	h.gh.SetRef(repoFull, "heads/main", head)
	h.deliver("push", "push/payload.json", pushEdits(bundle, head))
	h.waitIdleFor(releaseWait)
	sts := h.gh.Statuses(repoFull, head)
	if len(sts) != 2 || sts[1].State != "success" || !strings.Contains(sts[1].Description, "pushed catalogs v4.19-v4.21") {
		t.Fatalf("statuses of the merged release: %+v\n%s", sts, h.logs.String())
	}
	for _, v := range releaseCatalogs {
		digestOf(t, h.reg.Host+"/ops/index:"+v)
	}
	if tries, _ := p.counts(); tries != 1 || len(releasePRs(h)) != 1 {
		t.Errorf("the merge's push released again: %d image pushes, %d pull requests", tries, len(releasePRs(h)))
	}
	if page := h.get("/"); !strings.Contains(page, "<code>operators/kube-green/0.7.2</code>") || !strings.Contains(page, `class="release-opened"`) {
		t.Errorf("the status page does not show the release:\n%s", page)
	}
}

// A repository whose default branch names no release.bundleImage has not opted in: a merged bundle
// directory with a release-config.yaml is published as any push is, and nothing is pushed or opened.
func TestReleaseNeedsTheBundleImageSetting(t *testing.T) {
	h, p := releaseHarness(t)
	main := releaseMain(t, h)
	cfg := h.git.Git("show", main+":.catalogbot.yaml")
	optedOut := strings.Replace(cfg, "release:\n  bundleImage: "+h.reg.Host+"/pipeline/{package}:{version}", "", 1) + "\n"
	if optedOut == cfg {
		t.Fatalf("the release configuration names no bundle image:\n%s", cfg)
	}
	main = h.label(h.git.Commit("main", main, "catalog-admin", "no releases", map[string]string{".catalogbot.yaml": optedOut}), "OPTOUT")
	h.gh.SetRef(repoFull, "heads/main", main)
	bundle := mergeBundle(t, h, main)
	h.deliver("push", "push/payload.json", pushEdits(main, bundle))
	h.waitIdleFor(releaseWait)
	if tries, _ := p.counts(); tries != 0 || len(releasePRs(h)) != 0 {
		t.Fatalf("released without release.bundleImage: %d image pushes, %d pull requests\n%s", tries, len(releasePRs(h)), h.logs.String())
	}
	if rows, err := h.bot.store.RecentReleases(context.Background(), 10); err != nil || len(rows) != 0 {
		t.Errorf("releases recorded (the status page would list them as failed): %d, %v", len(rows), err)
	}
	if !strings.Contains(h.logs.String(), "names no release.bundleImage") {
		t.Errorf("the bot does not say why it did not release:\n%s", h.logs.String())
	}
}
