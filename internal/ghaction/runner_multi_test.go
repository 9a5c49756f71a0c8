package ghaction

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/pipeline"
)

// TestActionYAMLPublishesChangedCatalogs runs action.yml for a push to main of a template-driven
// repository: the catalogs the push changed (nfs-provisioner-operator's v4.19-v4.22, from the shared
// data) are published, each to its own tag, with a digest output each; a re-run publishes nothing.
func TestActionYAMLPublishesChangedCatalogs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	ctx := context.Background()
	release := releaseServer(t, false)
	const full = "Codertocat/Hello-World"
	gh := githubtest.New(t)
	reg := registrytest.New(t, nil)
	index := reg.Host + "/ops/index"
	dir, before, after := templatePublishRepo(t, reg.Host, index)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", after)
	event := pushPayload(t, before, after)
	r := newRunner(t, release, dir, "push", event, gh.URL)
	outs, err := r.run(ctx)
	if err != nil {
		t.Fatalf("%v\n%s", err, r.log.String())
	}
	if outs["verdict"] != "pass" {
		t.Fatalf("outputs %v\n%s", outs, r.log.String())
	}
	for _, v := range []string{"v4.19", "v4.20", "v4.21", "v4.22"} {
		ref, _ := name.ParseReference(index+":"+v, name.Insecure)
		desc, err := remote.Head(ref)
		if err != nil {
			t.Fatalf("%s was not published: %v\n%s", ref, err, r.log.String())
		}
		if want := v + "=" + index + "@" + desc.Digest.String(); !strings.Contains("\n"+outs["catalog-digests"]+"\n", "\n"+want+"\n") {
			t.Errorf("catalog-digests %q lacks %s", outs["catalog-digests"], want)
		}
		if rev, _, err := pipeline.TagRevision(ctx, index+":"+v, build.Options{}); err != nil || rev != after {
			t.Errorf("%s records %q (%v), want %s", v, rev, err, after)
		}
	}
	// A re-run finds every tag holding the pushed commit: nothing is published.
	if outs, err = newRunner(t, release, dir, "push", event, gh.URL).run(ctx); err != nil {
		t.Fatal(err)
	}
	for k, v := range outs {
		if strings.HasPrefix(k, "catalog_digest") && v != "" {
			t.Errorf("re-run published %s=%s", k, v)
		}
	}
}

// TestActionYAMLTemplateDrivenPullRequest runs action.yml for pull requests on a template-driven
// repository: a template change by the package's ci.yaml reviewer (Jooho) passes; the same change by a
// stranger fails the step, its owners error on the template.
func TestActionYAMLTemplateDrivenPullRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	ctx := context.Background()
	release := releaseServer(t, false)
	const full = "Codertocat/Hello-World"
	reg := registrytest.New(t, nil)
	dir, _, base := templatePublishRepo(t, reg.Host, reg.Host+"/ops/index")
	tmplPath := "operators/nfs-provisioner-operator/catalog-templates/basic-template.yaml"
	r, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	wt, _ := r.Worktree()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(tmplPath)))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(tmplPath)), append(data, "# reviewed\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wt.Add(tmplPath); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Jooho", Email: "jooho@example.com", When: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}
	h, err := wt.Commit("reviewed", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	head := h.String()
	for _, tc := range []struct {
		n       int
		author  string
		verdict string
	}{{4, "Jooho", "pass"}, {5, "mallory", "fail"}} {
		gh := githubtest.New(t)
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", base)
		gh.AddPullRequest(full, githubtest.PullRequest{Number: tc.n, User: tc.author, HeadSHA: head, BaseRef: "main", BaseSHA: base})
		event := prPayload(t, tc.n, base, head, tc.author)
		run := newRunner(t, release, dir, "pull_request", event, gh.URL)
		outs, err := run.run(ctx)
		if outs["verdict"] != tc.verdict || (err == nil) != (tc.verdict == "pass") {
			t.Fatalf("%s: verdict %q (%v), want %s\n%s", tc.author, outs["verdict"], err, tc.verdict, run.log.String())
		}
		if tc.verdict == "fail" {
			summary, _ := os.ReadFile(run.env["GITHUB_STEP_SUMMARY"])
			if !strings.Contains(string(summary), tmplPath) || !strings.Contains(string(summary), "owners-not-owner") {
				t.Errorf("%s: the step summary has no owners error on %s:\n%s", tc.author, tmplPath, summary)
			}
		}
	}
}

// templatePublishRepo makes a template-driven repository whose main went before (the configuration) →
// after (nfs-provisioner-operator's template, ci.yaml and renders), configured to publish each catalog to
// index:{version} on a stand-in opm base image pushed to host.
func templatePublishRepo(t *testing.T, host, index string) (dir, before, after string) {
	t.Helper()
	baseTag := pushStandInBase(t, host)
	dir = t.TempDir()
	g := newTestGit(t, dir, "main")
	commit := func(files map[string]string) string { return g.commit("admin", files) }
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\ncatalogs:\n  pattern: catalogs/{version}\n  image: " + index +
		":{version}\n  migrateLevel: bundle-object-to-csv-metadata\n  migrateFrom: v4.17\npublish:\n  base: " + baseTag + "\n"
	before = commit(map[string]string{".catalogbot.yaml": cfg})
	const pkg = "nfs-provisioner-operator"
	root := shareddata.Dir(t, "fbc-templates")
	files := map[string]string{}
	for _, rel := range []string{"operators/" + pkg + "/catalog-templates/basic-template.yaml", "operators/" + pkg + "/ci.yaml",
		"catalogs/v4.19/" + pkg + "/catalog.yaml", "catalogs/v4.20/" + pkg + "/catalog.yaml", "catalogs/v4.21/" + pkg + "/catalog.yaml", "catalogs/v4.22/" + pkg + "/catalog.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = string(data)
	}
	after = commit(files)
	return dir, before, after
}
