package pipeline

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/report"
)

func TestRenderSources(t *testing.T) {
	refs := "name: catalog\nrepo: example.test/catalog\ntag: latest\nreferences:\n" +
		"- name: a\n  image: ./src/a\n- name: b\n  image: ../outside/b\n- name: c\n  image: /abs/c\n" +
		"- name: d\n  image: example.test/ops/d-index:v1\n- name: e\n  image: ./src/e/../e2/\n"
	got := RenderSources("configs/catalog.yaml", []byte(refs))
	want := []string{"configs/catalog.yaml", "configs/src/a", "outside/b", "configs/src/e2"}
	if !slices.Equal(got, want) {
		t.Errorf("sources %q, want %q", got, want)
	}
	if got := RenderSources("catalog.yaml", []byte("name: [")); !slices.Equal(got, []string{"catalog.yaml"}) {
		t.Errorf("an invalid config: %q", got)
	}
	if got := RenderSources("catalog.yaml", []byte("name: c\nrepo: r.test/c\ntag: v\nreferences:\n- name: x\n  image: ../../x\n")); !slices.Equal(got, []string{"catalog.yaml"}) {
		t.Errorf("a reference outside the repository: %q", got)
	}
	for _, tc := range []struct {
		changed []string
		want    bool
	}{
		{[]string{"README.md"}, false},
		{[]string{"configs/catalog.yaml"}, true},
		{[]string{"configs/src/a/bundle.json"}, true},
		{[]string{"configs/src/ab/x.json"}, false},
		{nil, false},
	} {
		if got := Touches(tc.changed, want); got != tc.want {
			t.Errorf("Touches(%q) = %v, want %v", tc.changed, got, tc.want)
		}
	}
}

// The render stage of pull requests and publishes keeps local references inside the checkout (tree),
// whatever lies next to it, and reads images only from the allowed registries.
func TestRenderStageStaysInCheckoutAndAllowedRegistries(t *testing.T) {
	parent := t.TempDir()
	tree := filepath.Join(parent, "checkout")
	outside := filepath.Join(parent, "host", "foo")
	// The checkout's parent being a git work tree changes nothing: the checkout is the repository.
	for _, d := range []string{filepath.Join(tree, "catalog", "foo"), outside, filepath.Join(parent, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pkg := `{"schema":"olm.package","name":"foo"}` + "\n"
	for _, f := range []string{filepath.Join(outside, "catalog.json"), filepath.Join(tree, "catalog", "foo", "catalog.json")} {
		if err := os.WriteFile(f, []byte(pkg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var requests atomic.Int64
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1); h.ServeHTTP(w, r) })
	})
	for _, tc := range []struct {
		name, image, rule string
		allowed           []string
	}{
		{"dot-dot", "../host/foo", "reference-outside-repository", nil},
		{"absolute", outside, "reference-outside-repository", nil},
		{"registry not allowed", reg.Host + "/ops/foo-index:v1", "registry-not-allowed", []string{"quay.io"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refs := "name: catalog\nreferences:\n- name: foo\n  image: " + tc.image + "\n"
			st, rendered := renderStage(context.Background(), tree, "catalog.yaml", "catalog", []byte(refs),
				render.Options{NoCache: true, AllowedRegistries: tc.allowed}, "")
			if rendered || st.Status != report.Fail || len(st.Diagnostics) != 1 {
				t.Fatalf("rendered %v, stage %s %+v", rendered, st.Status, st.Diagnostics)
			}
			if d := st.Diagnostics[0]; d.Rule != tc.rule || d.File != "catalog.yaml" || d.Line != 3 {
				t.Errorf("got %s:%d %s %s", d.File, d.Line, d.Rule, d.Message)
			}
		})
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the registry outside the allowed ones got %d requests", n)
	}
}

// The references drift gate names committed files by their repository path when the catalog directory is
// not at the top (catalogs/prod), as the render stage's other diagnostics do, and its messages still name
// them relative to the catalogs' parent.
func TestRenderStageDriftNamesRepositoryPaths(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{
		"src/foo/catalog.json":       `{"schema":"olm.package","name":"foo"}` + "\n",
		"catalogs/prod/extra.json":   `{"schema":"olm.package","name":"extra"}` + "\n",
		"catalogs/prod/foo/old.json": `{"schema":"olm.package","name":"foo","description":"stale"}` + "\n",
	}
	for name, content := range files {
		p := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refs := "name: prod\nreferences:\n- name: foo\n  image: ./src/foo\n"
	st, _ := renderStage(context.Background(), tree, "catalog.yaml", "catalogs/prod", []byte(refs), render.Options{NoCache: true}, "")
	if st.Status != report.Fail || len(st.Diagnostics) == 0 {
		t.Fatalf("stage %s %+v, want drift", st.Status, st.Diagnostics)
	}
	var extra bool
	for _, d := range st.Diagnostics {
		if d.Rule != "render-drift" || !strings.HasPrefix(d.File, "catalogs/prod/") || !strings.HasPrefix(d.Message, strings.TrimPrefix(d.File, "catalogs/")) {
			t.Errorf("got %s: %s %.60q", d.File, d.Rule, d.Message)
		}
		extra = extra || d.File == "catalogs/prod/extra.json"
	}
	if !extra {
		t.Errorf("the committed file no reference renders is not named: %+v", st.Diagnostics)
	}
}
