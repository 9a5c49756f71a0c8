package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

func TestParseRealConfigs(t *testing.T) {
	root := shareddata.Dir(t, "refconfigs")
	cases := []struct {
		file     string
		refs     int
		wantRule string
	}{
		{"olm-docs/composite-catalog-example.catalog.yaml", 2, ""},
		{"zncdatadev-kubedoop-catalog/catalog.yaml@373d5c8", 1, ""},
		{"zncdatadev-kubedoop-catalog/catalog-template.yaml@af13ed5", 8, "config-duplicate-reference"},
		{"QiaolingTang-scripts-and-files/logging-operators.catalog.yaml", 0, "config-bad-image"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, c.file))
			if err != nil {
				t.Fatal(err)
			}
			cfg, ds := ParseConfig(data, c.file)
			for _, d := range ds {
				t.Log(d.String())
				if d.Line == 0 || d.File != c.file {
					t.Errorf("diagnostic without file:line: %s", d)
				}
			}
			if c.wantRule == "" && len(ds) > 0 {
				t.Fatalf("unexpected diagnostics")
			}
			if c.wantRule != "" {
				found := false
				for _, d := range ds {
					found = found || d.Rule == c.wantRule
				}
				if !found {
					t.Fatalf("no %s diagnostic", c.wantRule)
				}
			}
			if cfg != nil && c.refs > 0 && len(cfg.References) != c.refs {
				t.Errorf("got %d references, want %d", len(cfg.References), c.refs)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	cases := map[string]string{
		"name: c\nrepo: Quay.io/Org/Catalog\ntag: latest\nreferences: []\n": "config-bad-repo",
		"name: c\nreferences:\n- name: a\n  image: q.io/a:1\n  imgae: x\n":  "config-unknown-field",
		"name: c\nname: d\n":                                      "config-duplicate-key",
		"references: []\n":                                        "config-missing-name",
		"name: c\nreferences: {}\n":                               "config-wrong-type",
		"name: c\nreferences:\n- image: q.io/a:1\n":               "config-missing-reference-name",
		"name: c\nreferences:\n- name: ../x\n  image: q.io/a:1\n": "config-bad-reference-name",
		"a: &a [*a, *a]\n":                                        "config-yaml",
		"name: [\n":                                               "config-yaml",
		"name: c\nreferences:\n- name: a\n":                       "config-missing-image",
		"name: c\nrepo: q.io/c\nreferences:\n- name: a\n  image: q.io/a:1\n" + "x: 1\n": "config-unknown-field",
	}
	for in, rule := range cases {
		_, ds := ParseConfig([]byte(in), "catalog.yaml")
		var got []string
		for _, d := range ds {
			got = append(got, d.Rule)
		}
		if !strings.Contains(strings.Join(got, ","), rule) {
			t.Errorf("%q: got rules %v, want %s", in, got, rule)
		}
	}
}
