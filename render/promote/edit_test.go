package promote

import (
	"strings"
	"testing"
)

// AddCatalog changes only the list, as upstream's writer extends it.
func TestAddCatalog(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		source, target string
		line           int
	}{
		{name: "block list at the end of the file (konflux 12c88af40)",
			in:   "fbc:\n  catalog_mapping:\n    - template_name: semver.yaml\n      catalog_names:\n        - v4.20\n        - v4.21\n",
			want: "fbc:\n  catalog_mapping:\n    - template_name: semver.yaml\n      catalog_names:\n        - v4.20\n        - v4.21\n        - v4.22\n",
			line: 7},
		{name: "block list: after the comment upstream keeps with the last item, before the blank line",
			in:   "fbc:\n  catalog_mapping:\n  - catalog_names:\n    - v4.21\n    # the next one\n\n    template_name: basic.yaml\n",
			want: "fbc:\n  catalog_mapping:\n  - catalog_names:\n    - v4.21\n    # the next one\n    - v4.22\n\n    template_name: basic.yaml\n",
			line: 6},
		{name: "the first entry naming the source, not the others",
			in:   "fbc:\n  catalog_mapping:\n    - {template_name: a.yaml, catalog_names: [v4.20]}\n    - {template_name: b.yaml, catalog_names: [v4.21]}\n    - {template_name: c.yaml, catalog_names: [v4.21]}\n",
			want: "fbc:\n  catalog_mapping:\n    - {template_name: a.yaml, catalog_names: [v4.20]}\n    - {template_name: b.yaml, catalog_names: [v4.21, v4.22]}\n    - {template_name: c.yaml, catalog_names: [v4.21]}\n",
			line: 4},
		{name: "flow list of quoted names (apicurio-registry-3 69f4a6b63)",
			in:   "fbc:\n  catalog_mapping:\n    - template_name: v4.21.yaml\n      catalog_names: [\"v4.21\"]\n      type: olm.template.basic\n\nreviewers: []\n",
			want: "fbc:\n  catalog_mapping:\n    - template_name: v4.21.yaml\n      catalog_names: [\"v4.21\", v4.22]\n      type: olm.template.basic\n\nreviewers: []\n",
			line: 4},
		{name: "flow list whose new item would pass column 80: break after \", \" (sailoperator 4e5885e8c)",
			in:     "fbc:\n  catalog_mapping:\n    - template_name: basic.yaml\n      catalog_names: [\"v4.14\", \"v4.15\", \"v4.16\", \"v4.17\", \"v4.18\", v4.19, v4.20]\n      type: olm.template.basic\n",
			want:   "fbc:\n  catalog_mapping:\n    - template_name: basic.yaml\n      catalog_names: [\"v4.14\", \"v4.15\", \"v4.16\", \"v4.17\", \"v4.18\", v4.19, v4.20, \n            v4.21]\n      type: olm.template.basic\n",
			source: "v4.20", target: "v4.21", line: 5},
		{name: "flow list that already passes column 80: break after the comma, at the list's indentation",
			in:     "fbc:\n  catalog_mapping:\n    - template_name: basic.yaml\n      catalog_names: [\"v4.12\", \"v4.13\", \"v4.14\", \"v4.15\", \"v4.16\", \"v4.17\", \"v4.18\"]\n",
			want:   "fbc:\n  catalog_mapping:\n    - template_name: basic.yaml\n      catalog_names: [\"v4.12\", \"v4.13\", \"v4.14\", \"v4.15\", \"v4.16\", \"v4.17\", \"v4.18\",\n        v4.19]\n",
			source: "v4.18", target: "v4.19", line: 5},
		{name: "flow list continued on a wrapped line (hive-operator after e1c63e820)",
			in:     "fbc:\n  catalog_mapping:\n    - catalog_names: [v4.12, v4.13, v4.14, v4.15, v4.16, v4.17, v4.18, v4.19, \n            v4.20]\n      template_name: basic.yaml\n",
			want:   "fbc:\n  catalog_mapping:\n    - catalog_names: [v4.12, v4.13, v4.14, v4.15, v4.16, v4.17, v4.18, v4.19, \n            v4.20, v4.21]\n      template_name: basic.yaml\n",
			source: "v4.20", target: "v4.21", line: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			source, target := tc.source, tc.target
			if source == "" {
				source, target = "v4.21", "v4.22"
			}
			got, line, err := AddCatalog([]byte(tc.in), source, target)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want || line != tc.line {
				t.Errorf("line %d (want %d):\n%s\nwant:\n%s", line, tc.line, got, tc.want)
			}
		})
	}
}

// AddCatalog refuses, naming the line, what it cannot extend by adding the name alone.
func TestAddCatalogRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no entry names the source", "fbc:\n  catalog_mapping:\n    - {template_name: a.yaml, catalog_names: [v4.20]}\n", "no fbc.catalog_mapping entry names v4.21"},
		{"a flow list closed on another line", "fbc:\n  catalog_mapping:\n    - template_name: a.yaml\n      catalog_names: [v4.20, v4.21\n        ]\n", "line 4: catalog_names' last item is not followed by \"]\""},
		{"a flow list with a trailing comma", "fbc:\n  catalog_mapping:\n    - template_name: a.yaml\n      catalog_names: [v4.20, v4.21,]\n", "line 4: catalog_names' last item is not followed by \"]\""},
		{"no mapping", "reviewers: [a]\n", "no fbc.catalog_mapping list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := AddCatalog([]byte(tc.in), "v4.21", "v4.22")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q", err, tc.want)
			}
		})
	}
}
