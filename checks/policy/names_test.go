package policy

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// check_operator_name on real v4.20 packages: infinispan's bundles are all infinispan-operator.v*, which
// upstream merged with a warning (other bundles exist and agree); coherence-operator passes. A bundle
// renamed away from what its package's other bundles use is an error, and the unique rule reports the
// package once only when policy-operator-name does not run.
func TestOperatorName(t *testing.T) {
	ds := check(t, Input{Catalog: load(t, "community-operators-prod-v4.20", "infinispan")}, ruleOperatorName)
	if len(ds) == 0 || diag.HasErrors(ds) || !strings.Contains(ds[0].Message, "(infinispan-operator) is not its package's (infinispan)") {
		t.Fatalf("infinispan: want warnings only: %v", ds)
	}
	wantNone(t, check(t, Input{Catalog: load(t, "community-operators-prod-v4.20", "infinispan")}, ruleOperatorNameUnique))
	c := load(t, "community-operators-prod-v4.20", "coherence-operator")
	wantNone(t, check(t, Input{Catalog: c}, ruleOperatorName))
	b := lastBundle(c)
	b.Name = strings.Replace(b.Name, "coherence-operator.", "coherence.", 1)
	ds = check(t, Input{Catalog: c}, ruleOperatorName)
	if len(ds) != 1 || ds[0].Severity != diag.Error || ds[0].Bundle != b.Name {
		t.Fatalf("renamed bundle: %v", ds)
	}
	ds = check(t, Input{Catalog: c}, ruleOperatorNameUnique)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "2 operator names") {
		t.Fatalf("unique: %v", ds)
	}
	res, err := Run(t.Context(), Input{Catalog: c}, Severities{ruleOperatorName: diag.Error, ruleOperatorNameUnique: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Rule != ruleOperatorName {
		t.Fatalf("both rules on, one problem: %v", res.Diagnostics)
	}
}

// editMetadata rewrites b's olm.csv.metadata property with edit.
func editMetadata(t *testing.T, b *catalog.Bundle, edit func(m map[string]any)) {
	t.Helper()
	for i, p := range b.Properties {
		if p.Type != catalog.PropertyCSVMetadata {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(p.Value, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b.Properties[i].Value, _ = json.Marshal(m)
		return
	}
	t.Fatalf("bundle %s has no olm.csv.metadata", b.Name)
}

// check_api_version_constraints on the catalog: v4.20's bundles (Kubernetes 1.33) all fit; a
// minKubeVersion of 1.34.0 does not, one that is not a version is refused, and without the catalog's
// Kubernetes version the rule says once that it did not run.
func TestAPIVersionConstraints(t *testing.T) {
	c := load(t, "community-operators-prod-v4.20", "coherence-operator")
	wantNone(t, check(t, Input{Catalog: c, Kubernetes: "1.33", Name: "v4.20"}, ruleAPIVersions))
	b := lastBundle(c)
	editMetadata(t, b, func(m map[string]any) { m["minKubeVersion"] = "1.34.0" })
	ds := check(t, Input{Catalog: c, Kubernetes: "1.33", Name: "v4.20"}, ruleAPIVersions)
	if len(ds) != 1 || ds[0].Bundle != b.Name || !strings.Contains(ds[0].Message, "needs Kubernetes 1.34.0") {
		t.Fatalf("minKubeVersion 1.34.0 in v4.20: %v", ds)
	}
	wantNone(t, check(t, Input{Catalog: c, Kubernetes: "1.34", Name: "v4.21"}, ruleAPIVersions))
	editMetadata(t, b, func(m map[string]any) { m["minKubeVersion"] = "v1.30" })
	if ds := check(t, Input{Catalog: c, Kubernetes: "1.33"}, ruleAPIVersions); len(ds) != 1 || !strings.Contains(ds[0].Message, "is not a version") {
		t.Fatalf("minKubeVersion v1.30: %v", ds)
	}
	res, err := Run(t.Context(), Input{Catalog: c}, Severities{ruleAPIVersions: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, d := range res.Diagnostics {
		if d.Severity == diag.Note && strings.Contains(d.Message, "did not run") {
			notes++
		}
	}
	if notes != 1 {
		t.Fatalf("no Kubernetes version: want one note, got %v", res.Diagnostics)
	}
}

// A catalog migrated to olm.csv.metadata holds no objects: the rules that judge them say so in one note
// (v4.20), never silently; on v4.16, which holds them, no such note.
func TestRulesWithoutObjectsSaySo(t *testing.T) {
	sev := Severities{ruleNetworkPolicy: diag.Error, ruleOFCSV: diag.Error}
	for _, tc := range []struct {
		cat   string
		notes int
	}{{"community-operators-prod-v4.20", 1}, {"community-operators-prod-v4.16", 0}} {
		res, err := Run(t.Context(), Input{Catalog: load(t, tc.cat, "coherence-operator")}, sev)
		if err != nil {
			t.Fatal(err)
		}
		notes := 0
		for _, d := range res.Diagnostics {
			if d.Severity == diag.Note && strings.Contains(d.Message, "without their objects") {
				notes++
			}
		}
		if notes != tc.notes {
			t.Errorf("%s: %d notes, want %d: %v", tc.cat, notes, tc.notes, res.Diagnostics)
		}
	}
}

// bundleDir reads a shared bundle directory as a change's head holds it, at operators/<pkg>/<dir>.
func bundleDir(t *testing.T, pkg, version, dir string) BundleDir {
	t.Helper()
	root := shareddata.Dir(t, "bundles", pkg)
	bd := BundleDir{Dir: "operators/" + pkg + "/" + dir, Manifests: map[string][]byte{}}
	err := fs.WalkDir(os.DirFS(filepath.Join(root, version, "manifests")), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		bd.Manifests[p], err = os.ReadFile(filepath.Join(root, version, "manifests", p))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if bd.CI, err = os.ReadFile(filepath.Join(root, "ci.yaml")); err != nil {
		t.Fatal(err)
	}
	return bd
}

// check_operator_version_directory_name and check_using_fbc on every shared bundle: each directory is
// named after its CSV's version; etcd 0.9.4 committed as 0.9.5 is refused on the version's line. Only
// kube-green and rabbitmq-messaging-topology-operator enable fbc: the others get the warning.
func TestBundleDirectory(t *testing.T) {
	sev := Severities{ruleVersionDirectory: diag.Error, ruleUsingFBC: diag.Warning}
	root := shareddata.Dir(t, "bundles")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, pkg := range entries {
		versions, _ := os.ReadDir(filepath.Join(root, pkg.Name()))
		for _, v := range versions {
			if _, err := os.Stat(filepath.Join(root, pkg.Name(), v.Name(), "manifests")); err != nil {
				continue
			}
			checked++
			ds := CheckBundleDir(bundleDir(t, pkg.Name(), v.Name(), v.Name()), sev)
			fbc := pkg.Name() == "kube-green" || pkg.Name() == "rabbitmq-messaging-topology-operator"
			if len(ds) != map[bool]int{true: 0, false: 1}[fbc] || len(ds) == 1 && (ds[0].Rule != ruleUsingFBC || ds[0].Severity != diag.Warning) {
				t.Errorf("%s/%s: %v", pkg.Name(), v.Name(), ds)
			}
		}
	}
	if checked < 36 {
		t.Fatalf("checked %d bundle directories", checked)
	}
	ds := CheckBundleDir(bundleDir(t, "etcd", "0.9.4", "0.9.5"), Severities{ruleVersionDirectory: diag.Error})
	if len(ds) != 1 || ds[0].Line < 2 || !strings.HasSuffix(ds[0].File, ".clusterserviceversion.yaml") || !strings.Contains(ds[0].Message, `spec.version "0.9.4"`) {
		t.Fatalf("etcd 0.9.4 as 0.9.5: %v", ds)
	}
}

// Real data: openstack-lightspeed-operator's v0.0.1 and v0.0.2 need Kubernetes 1.31.0 and sit in the
// fbc-templates' v4.16 catalog (Kubernetes 1.29), merged upstream, whose check skips operators with fbc:
// the community preset reports them as warnings, not errors.
func TestAPIVersionConstraintsOnMergedCatalog(t *testing.T) {
	res, err := catalog.LoadDir(t.Context(), shareddata.Dir(t, "fbc-templates", "catalogs", "v4.16"), catalog.LoadOptions{
		Include: func(p string) bool { return strings.HasPrefix(p, "openstack-lightspeed-operator/") }})
	if err != nil {
		t.Fatal(err)
	}
	sev := SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity}})
	out, err := Run(t.Context(), Input{Catalog: res.Catalog, Kubernetes: "1.29", Name: "v4.16"}, Severities{ruleAPIVersions: sev[ruleAPIVersions]})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Diagnostics) != 2 || diag.HasErrors(out.Diagnostics) || !strings.Contains(out.Diagnostics[0].Message, "needs Kubernetes 1.31.0 (minKubeVersion) but catalog v4.16 serves Kubernetes 1.29") {
		t.Fatalf("openstack-lightspeed-operator in v4.16: %v", out.Diagnostics)
	}
}
