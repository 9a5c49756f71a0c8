package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// Every real ci.yaml of the shared data (community-operators-prod's, k8s-operatorhub's, the FBC
// repository's) follows the schema; edits that break it are refused on their line.
func TestCISchema(t *testing.T) {
	sev := Severities{ruleCISchema: diag.Error}
	var files []string
	for _, pattern := range []string{"bundles/*/ci.yaml", "bundles/*/ci.k8s-operatorhub.yaml", "fbc-templates/operators/*/ci.yaml"} {
		m, err := filepath.Glob(filepath.Join(shareddata.Dir(t), pattern))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 40 {
		t.Fatalf("only %d ci.yaml files found", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		wantNone(t, CheckCI(f, data, sev))
	}

	data, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "fbc-templates"), "operators", "nfs-provisioner-operator", "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, from, to, want string }{
		{"update graph", "addReviewers: true", "addReviewers: true\nupdateGraph: semver", "updateGraph must be one of"},
		{"template type", "type: olm.template.basic", "type: olm.template.fancy", "type must be one of"},
		{"catalog twice", "        - v4.20\n", "        - v4.20\n        - v4.20\n", `catalog "v4.20" is listed twice`},
		{"unknown fbc key", "  enabled: true", "  enabled: true\n  enable_auto_release: yes", `fbc has no key "enable_auto_release"`},
		{"no reviewers", "reviewers:\n  - Jooho", "reviewers: []", "reviewers must be a list of at least one"},
		{"enabled not a bool", "  enabled: true", "  enabled: \"true\"", "fbc.enabled must be true or false"},
	} {
		edited := strings.Replace(string(data), c.from, c.to, 1)
		if edited == string(data) {
			t.Fatalf("%s: the ci.yaml has no %q", c.name, c.from)
		}
		ds := CheckCI("operators/nfs-provisioner-operator/ci.yaml", []byte(edited), sev)
		if len(ds) != 1 || !strings.Contains(ds[0].Message, c.want) || ds[0].Line < 2 {
			t.Errorf("%s: %v", c.name, ds)
		}
	}
	if ds := CheckCI("ci.yaml", []byte("a: [\n"), sev); len(ds) != 1 || !strings.Contains(ds[0].Message, "not YAML") {
		t.Errorf("broken YAML: %v", ds)
	}
	if ds := CheckCI("ci.yaml", []byte(strings.Repeat("#", maxCIBytes+1)), sev); len(ds) != 1 {
		t.Errorf("oversized ci.yaml: %v", ds)
	}
}
