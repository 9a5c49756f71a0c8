package pipeline

import (
	"slices"
	"testing"
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
