package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

func fooCatalog(versions ...string) string {
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"foo","defaultChannel":"stable"}` + "\n")
	var entries []string
	for i, v := range versions {
		e := `{"name":"foo.v` + v + `"`
		if i > 0 {
			e += `,"replaces":"foo.v` + versions[i-1] + `"`
		}
		entries = append(entries, e+"}")
	}
	b.WriteString(`{"schema":"olm.channel","name":"stable","package":"foo","entries":[` + strings.Join(entries, ",") + "]}\n")
	for _, v := range versions {
		b.WriteString(`{"schema":"olm.bundle","name":"foo.v` + v + `","package":"foo","image":"quay.io/example/foo-bundle:v` + v +
			`","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"` + v + `"}}]}` + "\n")
	}
	return b.String()
}

// publishWorld is a repository whose main branch went A (foo 0.1.0) → B (foo 0.2.0), a branch side from
// A (foo 0.3.0, neither ancestor nor descendant of B), and a registry with a stand-in opm base image.
type publishWorld struct {
	repo         *gitrepo.Repo
	a, b, side   plumbing.Hash
	target, base string
}

func newPublishWorld(t *testing.T) publishWorld {
	t.Helper()
	ctx := context.Background()
	reg := registrytest.New(t, nil)
	w := publishWorld{target: reg.Host + "/ops/catalog:latest", base: registrytest.PushBase(t, reg.Host)}
	cfg := baseConfig + "publish:\n  image: " + w.target + "\n  base: " + w.base + "\n"
	g := initRepo(t, t.TempDir())
	at := func(versions ...string) tree {
		return tree{files: map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": fooCatalog(versions...)}}
	}
	w.a = g.commit(ctx, t, at("0.1.0"), "foo 0.1.0", "catalog-admin")
	w.b = g.commit(ctx, t, at("0.1.0", "0.2.0"), "foo 0.2.0", "catalog-admin")
	g.branch(t, "side", w.a)
	w.side = g.commit(ctx, t, at("0.1.0", "0.3.0"), "foo 0.3.0", "catalog-admin")
	var err error
	if w.repo, err = gitrepo.Open(g.dir); err != nil {
		t.Fatal(err)
	}
	return w
}

func mustTag(t *testing.T, s string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

// publish plans and publishes commit h (as a push with no known before) and returns the last stage.
func (w publishWorld) publish(t *testing.T, h plumbing.Hash) (report.Stage, string) {
	t.Helper()
	plan, skip, err := pipeline.PlanPublish(context.Background(), w.repo, "", h.String())
	if err != nil || plan == nil {
		t.Fatalf("plan %s: %v %s", h, err, skip)
	}
	res, err := pipeline.PublishCommit(context.Background(), w.repo, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Cleanup()
	return res.Stages[len(res.Stages)-1], res.Digest
}

func (w publishWorld) tagged(t *testing.T) (digest, revision string) {
	t.Helper()
	desc, err := remote.Head(mustTag(t, w.target))
	if err != nil {
		t.Fatal(err)
	}
	rev, found, err := pipeline.TagRevision(context.Background(), w.target, build.Options{})
	if err != nil || !found {
		t.Fatalf("revision of %s: %v (found %v)", w.target, err, found)
	}
	return desc.Digest.String(), rev
}

func TestCheckForward(t *testing.T) {
	w := newPublishWorld(t)
	commit := func(h plumbing.Hash) string { return h.String() }
	tests := []struct {
		name    string
		current string
		to      plumbing.Hash
		want    diag.Category // 0: allowed
		msg     string
	}{
		{"same commit", commit(w.b), w.b, 0, ""},
		{"forward", commit(w.a), w.b, 0, ""},
		{"forward over two", commit(w.a), w.side, 0, ""},
		{"backwards", commit(w.b), w.a, diag.Invalid, "never moves backwards"},
		{"diverged", commit(w.side), w.b, diag.Usage, "neither an ancestor nor a descendant"},
		{"no revision", "", w.b, diag.Usage, "records no source commit"},
		{"not a SHA", "HEAD~1", w.b, diag.Usage, "not a commit SHA"},
		{"unknown commit", strings.Repeat("ab", 20), w.b, diag.Usage, "not in the repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := w.repo.Resolve(tt.to.String())
			if err != nil {
				t.Fatal(err)
			}
			err = pipeline.CheckForward(w.repo, "reg/ops/catalog:latest", tt.current, c)
			if tt.want == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || diag.CategoryOf(err) != tt.want || !strings.Contains(err.Error(), tt.msg) ||
				!strings.Contains(err.Error(), "reg/ops/catalog:latest") {
				t.Fatalf("got %v (category %v), want a %v error containing %q and the tag", err, diag.CategoryOf(err), tt.want, tt.msg)
			}
		})
	}
}

// An older commit published after a newer one (a push handled late) pushes its image by digest but
// leaves the tag on the newer catalog, and says why; the image records its commit.
func TestPublishNeverMovesTheTagBackwards(t *testing.T) {
	w := newPublishWorld(t)
	st, digB := w.publish(t, w.b)
	if st.Status != report.Pass || !strings.Contains(st.Summary, " from "+w.b.String()[:12]) {
		t.Fatalf("publish B: %+v", st)
	}
	dig, rev := w.tagged(t)
	if rev != w.b.String() || !strings.HasSuffix(digB, dig) {
		t.Fatalf("tag at %s from %s, want %s from %s", dig, rev, digB, w.b)
	}
	st, digA := w.publish(t, w.a)
	if st.Status != report.Fail || digA != "" || !strings.Contains(st.Err, "never moves backwards") {
		t.Fatalf("publish A after B: %+v (digest %q)", st, digA)
	}
	if d, r := w.tagged(t); d != dig || r != rev {
		t.Fatalf("the tag moved back to %s from %s", d, r)
	}
	// Publishing B again (a retried job) changes nothing: the tag already holds B's catalog, as in every
	// layout (a single-catalog repository is a layout of one).
	if st, again := w.publish(t, w.b); st.Status != report.Skipped || again != "" || !strings.Contains(st.Summary, "unchanged since "+w.b.String()[:12]) {
		t.Fatalf("publish B again: %+v %s, want unchanged", st, again)
	}
	if d, r := w.tagged(t); d != dig || r != rev {
		t.Fatalf("publishing B again moved the tag to %s from %s", d, r)
	}
	// A diverged commit (history rewritten) needs a person.
	if st, _ := w.publish(t, w.side); st.Status != report.ActionRequired || !strings.Contains(st.Err, "neither an ancestor") {
		t.Fatalf("publish side after B: %+v", st)
	}
	if d, _ := w.tagged(t); d != dig {
		t.Fatalf("a diverged commit moved the tag to %s", d)
	}
}

// A tag holding an image that records no revision (not published by catalogbot) is not replaced.
func TestPublishRefusesATagWithoutRevision(t *testing.T) {
	w := newPublishWorld(t)
	img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), &v1.ConfigFile{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(mustTag(t, w.target), img); err != nil {
		t.Fatal(err)
	}
	want, _ := img.Digest()
	st, dig := w.publish(t, w.b)
	if st.Status != report.ActionRequired || dig != "" || !strings.Contains(st.Err, "records no source commit") {
		t.Fatalf("publish over a foreign image: %+v", st)
	}
	if d, rev := w.tagged(t); d != want.String() || rev != "" {
		t.Fatalf("tag at %s (%q), want the foreign %s", d, rev, want)
	}
}
