package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// sharedData is a path in the project's real data (see internal/shareddata).
func sharedData(t testing.TB, elem ...string) string {
	t.Helper()
	return shareddata.Dir(t, elem...)
}

func TestParseRealCIFiles(t *testing.T) {
	want := map[string][]string{
		"aqua":        {"guyyakir", "baruchbilanski", "semyonmor", "koppularajender", "tikolsky"},
		"cockroachdb": {"dmesser", "J0zi", "udnay", "chrisseto"}, // no newline at the end of the file
		"etcd":        nil,                                       // no reviewers key
		"kube-green":  {"davidebianchi"},                         // next to an fbc: block
	}
	files, err := filepath.Glob(filepath.Join(sharedData(t, "bundles"), "*", "ci.yaml"))
	if err != nil || len(files) < len(want) {
		t.Fatalf("found %d ci.yaml files: %v", len(files), err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		pkg := filepath.Base(filepath.Dir(file))
		got, ds := ParseOwnersFile("operators/"+pkg+"/ci.yaml", data)
		if len(ds) != 0 {
			t.Errorf("%s: diagnostics %v", file, ds)
		}
		if w, ok := want[pkg]; ok && !slices.Equal(got, w) {
			t.Errorf("%s: reviewers %q, want %q", pkg, got, w)
		}
		if n := strings.Count(string(data), "\n  - ") + strings.Count(string(data), "\n - ") + strings.Count(string(data), "\n- "); n > 0 && len(got) == 0 {
			t.Errorf("%s: file lists entries but no reviewers were read", pkg)
		}
	}
}

func TestParseOwnersFile(t *testing.T) {
	owners := `# Kubernetes-style OWNERS
approvers:
  - alice
  - my-org/etcd-team
  - Alice
reviewers:
  - mallory
emeritus_approvers: [old]
options: {no_parent_owners: true}
`
	for _, tc := range []struct {
		name, file, src string
		want            []string
		rules           []string
	}{
		{"OWNERS approvers only", "catalog/etcd/OWNERS", owners, []string{"alice", "my-org/etcd-team"}, nil},
		{"ci.yaml reviewers", "operators/etcd/ci.yaml", "updateGraph: semver-mode\nreviewers: [bob]\napprovers: [mallory]\n", []string{"bob"}, nil},
		{"empty file", "ci.yaml", "", nil, nil},
		{"null reviewers", "ci.yaml", "reviewers:\n", nil, nil},
		{"bad entries left out", "ci.yaml", "reviewers:\n  - bob\n  - not a login\n  - [x]\n  - \n  - carol\n", []string{"bob", "carol"},
			[]string{"owners-file-bad-entry", "owners-file-bad-entry", "owners-file-bad-entry"}},
		{"reviewers not a list", "ci.yaml", "reviewers: bob\n", nil, []string{"owners-file-wrong-type"}},
		{"not a mapping", "ci.yaml", "- bob\n", nil, []string{"owners-file-wrong-type"}},
		{"duplicate key: first wins", "ci.yaml", "reviewers: [bob]\nreviewers: [mallory]\n", []string{"bob"}, []string{"owners-file-duplicate-key"}},
		{"syntax error", "ci.yaml", "reviewers: [bob\n", nil, []string{"owners-file-syntax"}},
		{"aliases", "ci.yaml", "x: &r [bob, carol]\nreviewers: *r\n", []string{"bob", "carol"}, nil},
		{"bomb", "ci.yaml", "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n" +
			"d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]\nreviewers: [bob]\n",
			nil, []string{"owners-file-too-complex"}},
		{"too large", "ci.yaml", "reviewers: [bob]\n#" + strings.Repeat("x", MaxFileSize), nil, []string{"owners-file-too-large"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ds := ParseOwnersFile(tc.file, []byte(tc.src))
			if !slices.Equal(got, tc.want) {
				t.Errorf("owners %q, want %q", got, tc.want)
			}
			var rules []string
			for _, d := range ds {
				rules = append(rules, d.Rule)
				if d.Severity != diag.Warning || d.File != tc.file || d.Check != "owners" {
					t.Errorf("diagnostic %+v: want a warning of check owners on %s", d, tc.file)
				}
				if d.Rule != "owners-file-too-large" && d.Line == 0 {
					t.Errorf("diagnostic without a line: %s", d)
				}
			}
			if !slices.Equal(rules, tc.rules) {
				t.Errorf("rules %q, want %q: %v", rules, tc.rules, ds)
			}
		})
	}
}
