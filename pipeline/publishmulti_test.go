package pipeline_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// multiPublishWorld is the eleven-catalog repository with its catalogs published to an in-process
// registry, each to its own tag.
type multiPublishWorld struct {
	g          *gitRepo
	repo       *gitrepo.Repo
	index, cfg string
}

func newMultiPublishWorld(t *testing.T, extra string) multiPublishWorld {
	t.Helper()
	reg := registrytest.New(t, nil)
	base := registrytest.PushBase(t, reg.Host)
	w := multiPublishWorld{index: reg.Host + "/ops/index"}
	w.cfg = strings.Replace(multiConfig, "image: registry.example.test/index:{version}", "image: "+w.index+":{version}", 1) +
		"publish:\n  base: " + base + "\n" + extra
	w.g = initRepo(t, filepath.Join(t.TempDir(), "repo"))
	return w
}

func (w *multiPublishWorld) commit(t *testing.T, tr tree, msg string) plumbing.Hash {
	t.Helper()
	tr = tr.with(map[string]string{".catalogbot.yaml": w.cfg})
	h := w.g.commit(t.Context(), t, tr, msg, "catalog-admin")
	repo, err := gitrepo.Open(w.g.dir)
	if err != nil {
		t.Fatal(err)
	}
	w.repo = repo
	return h
}

// publish plans and publishes the push before..after.
func (w *multiPublishWorld) publish(t *testing.T, before, after plumbing.Hash) pipeline.CommitPublish {
	t.Helper()
	b := ""
	if !before.IsZero() {
		b = before.String()
	}
	plan, skip, err := pipeline.PlanPublish(t.Context(), w.repo, b, after.String())
	if err != nil || plan == nil {
		t.Fatalf("plan %s: %v %s", after, err, skip)
	}
	res, err := pipeline.PublishCommit(t.Context(), w.repo, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(res.Cleanup)
	return res
}

// revisions reads the commit each catalog's tag holds ("" when the tag does not exist).
func (w *multiPublishWorld) revisions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range allVersions {
		rev, found, err := pipeline.TagRevision(t.Context(), w.index+":"+v, build.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if found {
			out[v] = rev
		}
	}
	return out
}

func lastStage(t *testing.T, res pipeline.CommitPublish) report.Stage {
	t.Helper()
	if len(res.Stages) == 0 {
		t.Fatal("no stage")
	}
	return res.Stages[len(res.Stages)-1]
}

// After a merge only the catalogs whose content changed are rebuilt and pushed, each to its own tag; a
// catalog that does not validate is not published and the others still are; a tag never moves back.
func TestPublishChangedCatalogs(t *testing.T) {
	w := newMultiPublishWorld(t, "")
	base := elevenBase(t)
	a := w.commit(t, base, "eleven catalogs")
	res := w.publish(t, plumbing.ZeroHash, a)
	st := lastStage(t, res)
	if st.Status != report.Pass || len(res.Digests) != 11 || !strings.Contains(st.Summary, "pushed catalogs v4.12-v4.22") {
		t.Fatalf("first publish: %s %q %s, %d digests\n%s", st.Status, st.Summary, st.Err, len(res.Digests), st.Details)
	}
	revs := w.revisions(t)
	for _, v := range allVersions {
		if revs[v] != a.String() {
			t.Errorf("%s holds %q, want %s", v, revs[v], a)
		}
	}

	// B: nfs-provisioner-operator gains a channel (v4.19-v4.22), rendered; and a hand-written package
	// that does not validate lands in v4.13.
	nfsHead := base.with(map[string]string{nfsTemplate: nfsBeta(t, base.files[nfsTemplate])})
	bTree := renderedTree(t, nfsHead, base, nfsPkg).with(map[string]string{
		"catalogs/v4.13/handmade/catalog.yaml": "schema: olm.package\nname: handmade\ndefaultChannel: missing\n"})
	b := w.commit(t, bTree, "nfs beta, handmade")
	res = w.publish(t, a, b)
	st = lastStage(t, res)
	if st.Status != report.Fail {
		t.Errorf("publish B: %s, want fail for the invalid v4.13", st.Status)
	}
	if len(res.Digests) != 4 || !strings.Contains(st.Summary, "pushed catalogs v4.19-v4.22") ||
		!strings.Contains(st.Summary, "not published: catalog v4.13") || !strings.Contains(st.Summary, "6 unchanged") {
		t.Errorf("publish B: %q, %d digests\n%s", st.Summary, len(res.Digests), st.Details)
	}
	onHandmade := false
	for _, d := range st.Diagnostics {
		if strings.HasPrefix(d.File, "catalogs/v4.13/handmade/") {
			onHandmade = true
		}
	}
	if !onHandmade {
		t.Errorf("no diagnostic on catalogs/v4.13/handmade: %+v", st.Diagnostics)
	}
	revs = w.revisions(t)
	for _, v := range allVersions {
		want := a.String()
		if v >= "v4.19" {
			want = b.String()
		}
		if revs[v] != want {
			t.Errorf("after B, %s holds %s, want %s", v, revs[v], want)
		}
	}

	// Publishing B again (a re-run) publishes nothing: every tag holds B's catalog.
	res = w.publish(t, plumbing.ZeroHash, b)
	if st := lastStage(t, res); len(res.Digests) != 0 || !strings.Contains(st.Summary, "10 unchanged") {
		t.Errorf("re-run of B: %q, pushed %v", st.Summary, res.Digests)
	}

	// Publishing A again (a late job) moves no tag back, and publishes nothing.
	res = w.publish(t, plumbing.ZeroHash, a)
	if len(res.Digests) != 0 {
		t.Errorf("publishing A after B pushed %v", res.Digests)
	}
	if got := w.revisions(t); got["v4.20"] != b.String() {
		t.Errorf("v4.20 moved back to %s", got["v4.20"])
	}

	// C changes publish.platforms only: every valid catalog is rebuilt, though no directory changed.
	w.cfg += "  platforms: [linux/amd64]\n"
	c := w.commit(t, bTree, "platforms")
	res = w.publish(t, b, c)
	if len(res.Digests) != 10 {
		t.Errorf("after a build setting changed, pushed %d catalogs, want the 10 valid ones: %s", len(res.Digests), lastStage(t, res).Details)
	}
}

// A merged stale render (the template changed, the catalogs not re-rendered) publishes none of the
// package's catalogs; with publish.commitRendered the render is staged to be committed back, as
// catalogs/ with every render written over its committed file.
func TestPublishStaleRenderCommitRendered(t *testing.T) {
	w := newMultiPublishWorld(t, "  commitRendered: true\n")
	base := elevenBase(t)
	a := w.commit(t, base, "eleven catalogs")
	w.publish(t, plumbing.ZeroHash, a)
	tmpl := nfsBeta(t, base.files[nfsTemplate])
	b := w.commit(t, base.with(map[string]string{nfsTemplate: tmpl}), "template only")
	res := w.publish(t, a, b)
	var render report.Stage
	for _, s := range res.Stages {
		if s.Name == "render" {
			render = s
		}
	}
	if render.Status != report.Fail || len(filesOf(render, "render-drift")) != 4 {
		t.Errorf("render %s, drift on %q, want the four nfs catalogs", render.Status, filesOf(render, "render-drift"))
	}
	if len(res.Digests) != 0 {
		t.Errorf("pushed %v from a stale render", res.Digests)
	}
	if res.Rendered.Path != "catalogs" || res.Rendered.Dir == "" {
		t.Fatalf("rendered %q at %q, want catalogs staged", res.Rendered.Path, res.Rendered.Dir)
	}
	want := renderedTree(t, base.with(map[string]string{nfsTemplate: tmpl}), base, nfsPkg)
	for _, v := range allVersions {
		f := "catalogs/" + v + "/" + nfsPkg + "/catalog.yaml"
		got, err := os.ReadFile(filepath.Join(res.Rendered.Dir, v, nfsPkg, "catalog.yaml"))
		if wantData, ok := want.files[f]; ok != (err == nil) || ok && string(got) != wantData {
			t.Errorf("staged %s: err %v, equal %v", f, err, string(got) == wantData)
		}
	}
	if _, err := os.Stat(filepath.Join(res.Rendered.Dir, "v4.12", odfPkg, "catalog.yaml")); err != nil {
		t.Errorf("the staged catalogs lack the untouched packages: %v", err)
	}
}

// nfsBeta renames nfs-provisioner-operator's channel alpha to beta in its template.
func nfsBeta(t *testing.T, tmpl string) string {
	t.Helper()
	out := strings.Replace(strings.Replace(tmpl, "  name: alpha\n", "  name: beta\n", 1), "defaultChannel: alpha", "defaultChannel: beta", 1)
	if strings.Contains(out, "alpha") {
		t.Fatalf("template edit did not apply:\n%s", out)
	}
	return out
}
