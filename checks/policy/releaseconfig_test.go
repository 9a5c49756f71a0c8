package policy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// rabbitmq-messaging-topology-operator's real release-config.yaml files name templates its ci.yaml maps;
// a template the ci.yaml does not map, or a semver template's channel that is not an archetype, is
// refused on its line.
func TestReleaseConfig(t *testing.T) {
	sev := Severities{ruleReleaseConfig: diag.Error}
	dir := shareddata.Dir(t, "bundles", "rabbitmq-messaging-topology-operator")
	ci, err := os.ReadFile(filepath.Join(dir, "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rc []byte
	for _, v := range []string{"1.19.2", "1.19.3"} {
		if rc, err = os.ReadFile(filepath.Join(dir, v, "release-config.yaml")); err != nil {
			t.Fatal(err)
		}
		wantNone(t, CheckReleaseConfig(v+"/release-config.yaml", rc, ci, sev))
	}

	ds := CheckReleaseConfig("release-config.yaml", []byte(strings.Replace(string(rc), "template_name: v4.21.yaml", "template_name: v4.23.yaml", 1)), ci, sev)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, `template "v4.23.yaml" is not mapped`) || ds[0].Line < 2 {
		t.Errorf("unmapped template: %v", ds)
	}
	semverCI := strings.Replace(string(ci), "template_name: v4.21.yaml\n      type: olm.template.basic", "template_name: v4.21.yaml\n      type: olm.semver", 1)
	if semverCI == string(ci) {
		t.Fatal("ci.yaml has no v4.21.yaml mapping")
	}
	ds = CheckReleaseConfig("release-config.yaml", rc, []byte(semverCI), sev)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, `channel "stable" is not one of [Candidate Fast Stable]`) {
		t.Errorf("semver channel: %v", ds)
	}
	if ds := CheckReleaseConfig("release-config.yaml", []byte("catalog_templates: {}\n"), ci, sev); len(ds) != 1 {
		t.Errorf("no list: %v", ds)
	}
}

// The rest of operator-pipelines' release-config.yaml schema (check_validate_schema_bundle_release_config),
// each problem once on its line, and check_bundle_release_config's fbc.enabled: the real files edited.
func TestReleaseConfigSchema(t *testing.T) {
	sev := Severities{ruleReleaseConfig: diag.Error}
	dir := shareddata.Dir(t, "bundles", "rabbitmq-messaging-topology-operator")
	ci, err := os.ReadFile(filepath.Join(dir, "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := os.ReadFile(filepath.Join(dir, "1.19.3", "release-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ edit, want string }{
		{"automerge: true\n" + string(rc), `"automerge" is not a key`},
		{"merge: yes please\n" + string(rc), "merge must be true or false"},
		{strings.Replace(string(rc), "channels:", "skipRange: [1]\n  channels:", 1), "skipRange must be a string"},
		{strings.Replace(string(rc), "channels:", "skips: []\n  channels:", 1), "skips must list at least one string"},
	} {
		if tc.edit == string(rc) {
			t.Fatalf("edit for %q changed nothing", tc.want)
		}
		ds := CheckReleaseConfig("release-config.yaml", []byte(tc.edit), ci, sev)
		if len(ds) != 1 || !strings.Contains(ds[0].Message, tc.want) || ds[0].Line < 1 {
			t.Errorf("%s: %v", tc.want, ds)
		}
	}
	aqua, err := os.ReadFile(filepath.Join(shareddata.Dir(t, "bundles", "aqua"), "ci.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if ds := CheckReleaseConfig("release-config.yaml", rc, aqua, sev); len(ds) != 1 || !strings.Contains(ds[0].Message, "does not enable fbc") {
		t.Errorf("aqua's ci.yaml does not enable fbc: %v", ds)
	}
}
