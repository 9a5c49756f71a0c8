package bot

import (
	"github.com/catalogbot/catalogbot/internal/registrytest"

	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// With publish.commitRendered, a push whose catalog is not what its references config renders gets the
// rendered catalog committed on top (a fast-forward of the default branch), and publishes nothing itself;
// the rendered commit's push publishes it. Without it, such a push is refused and nothing is committed.
func TestPushCommitsTheRenderedCatalogBack(t *testing.T) {
	h := newHarness(t)
	h.git.Git("config", "receive.denyCurrentBranch", "updateInstead") // the test remote has a work tree
	base := registrytest.PushBase(t, h.reg.Host)
	target := h.reg.Host + "/ops/catalog:latest"
	cfg := repoConfig + "references:\n  file: catalog.yaml\npublish:\n  image: " + target + "\n  base: " + base + "\n  commitRendered: true\n"
	main := h.seedMain(cfg)
	refs := "name: catalog\nrepo: " + h.reg.Host + "/ops/catalog\ntag: latest\nreferences:\n" +
		"- name: foo-operator\n  image: ./src/foo-operator\n- name: bar-operator\n  image: ./src/bar-operator\n"
	src := func(foo ...string) map[string]string {
		return map[string]string{
			"catalog.yaml":                  refs,
			"src/foo-operator/catalog.json": fbc("foo-operator", func(v string) string { return h.bundleImage("foo-operator", v) }, foo...),
			"src/bar-operator/catalog.json": fbc("bar-operator", func(v string) string { return h.bundleImage("bar-operator", v) }, "0.1.0"),
		}
	}
	after := h.label(h.git.Commit("main", main, "catalog-admin", "render from references", src("0.1.0", "0.2.0")), "AFTER")
	pushEdits := func(before, after string) map[string]any {
		return repoEdits(map[string]any{"ref": "refs/heads/main", "before": before, "after": after, "deleted": false,
			"created": false, "base_ref": nil, "repository.master_branch": "main"})
	}
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitIdle()

	rendered := h.label(h.git.Git("rev-parse", "main"), "RENDERED")
	if rendered == after {
		t.Fatal("nothing was committed back")
	}
	if parent := h.git.Git("rev-parse", rendered+"^"); parent != after {
		t.Errorf("the rendered commit's parent is %s, want %s", parent, after)
	}
	if got, want := h.git.Git("ls-tree", "-r", "--name-only", rendered, "catalog"), "catalog/bar-operator/index.json\ncatalog/foo-operator/index.json"; got != want {
		t.Errorf("rendered catalog:\n%s\nwant:\n%s", got, want)
	}
	if diff := h.git.Git("diff", "--name-only", after, rendered, "--", ".", ":!catalog"); diff != "" {
		t.Errorf("the rendered commit changed files outside the catalog: %s", diff)
	}
	if msg := h.git.Git("log", "-1", "--format=%B", rendered); !strings.Contains(msg, renderedTrailer) {
		t.Errorf("message %q has no %q", msg, renderedTrailer)
	}
	sts := h.gh.Statuses(repoFull, after)
	if len(sts) != 2 || sts[1].State != "success" || !strings.Contains(sts[1].Description, "rendered catalog committed as "+short(rendered)) {
		t.Fatalf("statuses of the pushed commit: %+v", sts)
	}
	if ref, err := name.ParseReference(target, name.Insecure); err != nil {
		t.Fatal(err)
	} else if _, err := remote.Head(ref); err == nil {
		t.Errorf("%s was published from a commit whose catalog was not rendered", target)
	}

	// The rendered commit's push publishes it.
	h.deliver("push", "push/payload.json", pushEdits(after, rendered))
	h.waitIdle()
	sts = h.gh.Statuses(repoFull, rendered)
	if len(sts) != 2 || sts[1].State != "success" || !strings.HasPrefix(sts[1].Description, "pushed sha256:") {
		t.Fatalf("statuses of the rendered commit: %+v", sts)
	}
	published := strings.TrimPrefix(sts[1].Description, "pushed ")
	if got := digestOf(t, target); got != published {
		t.Errorf("%s is at %s, want %s", target, got, published)
	}

	// Without commitRendered, a references change committed without its render is not published.
	noCommit := strings.Replace(cfg, "  commitRendered: true\n", "", 1)
	files := src("0.1.0", "0.2.0", "0.3.0")
	files[".catalogbot.yaml"] = noCommit
	stale := h.label(h.git.Commit("main", rendered, "catalog-admin", "foo 0.3.0, not rendered", files), "STALE")
	h.deliver("push", "push/payload.json", pushEdits(rendered, stale))
	h.waitIdle()
	sts = h.gh.Statuses(repoFull, stale)
	if len(sts) != 2 || sts[1].State != "failure" || !strings.Contains(sts[1].Description, "1 file differs from what catalog.yaml renders") {
		t.Fatalf("statuses of the stale commit: %+v", sts)
	}
	if head := h.git.Git("rev-parse", "main"); head != stale {
		t.Errorf("main moved to %s", head)
	}
	if got := digestOf(t, target); got != published {
		t.Errorf("a refused publish moved %s to %s", target, got)
	}
	golden(t, "push-commits-rendered", h.transcript(nil, after, rendered, stale))
}

// A push handled after main moved on renders and commits the branch's tip, not the older pushed commit:
// the rendered commit is a fast-forward of the tip, and the older commit gets no status. (When main moves
// between the fetch and the push, gitcache.Push refuses: it never forces.)
func TestCommitRenderedLosesToANewerPush(t *testing.T) {
	h := newHarness(t)
	h.git.Git("config", "receive.denyCurrentBranch", "updateInstead")
	target := h.reg.Host + "/ops/catalog:latest"
	cfg := repoConfig + "references:\n  file: catalog.yaml\npublish:\n  image: " + target + "\n  commitRendered: true\n"
	main := h.seedMain(cfg)
	refs := "name: catalog\nrepo: " + h.reg.Host + "/ops/catalog\ntag: latest\nreferences:\n- name: foo-operator\n  image: ./src/foo-operator\n"
	after := h.git.Commit("main", main, "catalog-admin", "references", map[string]string{"catalog.yaml": refs,
		"src/foo-operator/catalog.json": fbc("foo-operator", func(v string) string { return h.bundleImage("foo-operator", v) }, "0.1.0")})
	newer := h.git.Commit("main", after, "catalog-admin", "docs", map[string]string{"README.md": "newer\n"}) // its push is not here yet
	h.deliver("push", "push/payload.json", repoEdits(map[string]any{"ref": "refs/heads/main", "before": main, "after": after,
		"deleted": false, "created": false, "base_ref": nil, "repository.master_branch": "main"}))
	h.waitIdle()
	if parent := h.git.Git("rev-parse", "main^"); parent != newer {
		t.Fatalf("main's parent is %s, want the rendered commit on top of the tip %s", parent, newer)
	}
	if msg := h.git.Git("log", "-1", "--format=%B", "main"); !strings.Contains(msg, renderedTrailer) {
		t.Fatalf("main is not a rendered commit: %q", msg)
	}
	if sts := h.gh.Statuses(repoFull, after); len(sts) != 0 {
		t.Fatalf("the older pushed commit got statuses %+v", sts)
	}
	sts := h.gh.Statuses(repoFull, newer)
	if len(sts) != 2 || sts[1].State != "success" || !strings.Contains(sts[1].Description, "rendered catalog committed") {
		t.Fatalf("statuses of the tip: %+v", sts)
	}
	if ref, err := name.ParseReference(target, name.Insecure); err != nil {
		t.Fatal(err)
	} else if _, err := remote.Head(ref); err == nil {
		t.Errorf("%s was published", target)
	}
}
