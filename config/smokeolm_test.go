package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// smoke.olm chooses the OLM of every catalog (default v0); smoke.olmByCatalog chooses per catalog by
// name or OpenShift version, the first entry naming a catalog winning.
func TestSmokeOLMsFor(t *testing.T) {
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  pattern: catalogs/{version}
smoke:
  enabled: true
  olm: v0
  olmByCatalog:
    - clusterVersions: [v4.18, "4.19", v4.20]
      olm: both
    - clusterVersions: [v4.21]
      olm: v1
`))
	if err != nil || len(ds) != 0 {
		t.Fatalf("%v %v", err, ds)
	}
	for _, tc := range []struct {
		cat  Catalog
		want []string
	}{
		{Catalog{Name: "v4.17", OpenShift: "4.17"}, []string{"v0"}},
		{Catalog{Name: "v4.18", OpenShift: "4.18"}, []string{"v0", "v1"}},
		{Catalog{Name: "v4.19", OpenShift: "4.19"}, []string{"v0", "v1"}},
		{Catalog{Name: "v4.21", OpenShift: "4.21"}, []string{"v1"}},
		{Catalog{}, []string{"v0"}},
	} {
		if got := cfg.Smoke.OLMsFor(tc.cat); !slices.Equal(got, tc.want) {
			t.Errorf("OLMsFor(%s) = %q, want %q", tc.cat.Name, got, tc.want)
		}
	}
	if got := (SmokeConfig{}).OLMsFor(Catalog{Name: "x"}); !slices.Equal(got, []string{"v0"}) {
		t.Errorf("default = %q", got)
	}
	if got := (SmokeConfig{OLM: "v1"}).OLMsFor(Catalog{}); !slices.Equal(got, []string{"v1"}) {
		t.Errorf("single catalog, v1 = %q", got)
	}
}

func TestSmokeOLMRefused(t *testing.T) {
	const cats = "catalogs:\n  pattern: catalogs/{version}\n"
	for _, tc := range []struct {
		yaml, want string
		line       int
		sev        diag.Severity
	}{
		{"smoke:\n  olm: v2\n", `smoke.olm: "v2" is not one of v0, v1, both`, 4, diag.Error},
		{"smoke:\n  olmByCatalog: [{clusterVersions: [v4.18], olm: v1}]\n", "smoke.olmByCatalog: set without catalogs", 4, diag.Error},
		{cats + "smoke:\n  olmByCatalog:\n    - clusterVersions: [v4.18]\n", "smoke.olmByCatalog[0]: no olm", 7, diag.Error},
		{cats + "smoke:\n  olmByCatalog:\n    - olm: v1\n", "smoke.olmByCatalog[0]: no clusterVersions", 7, diag.Error},
		{cats + "smoke:\n  olmByCatalog:\n    - {clusterVersions: [v4.18], olm: all}\n", `smoke.olmByCatalog[0].olm: "all" is not one of`, 7, diag.Error},
		{cats + "smoke:\n  olmByCatalog:\n    - {clusterVersions: [../x], olm: v1}\n", `"../x" is not a catalog name`, 7, diag.Error},
		{cats + "smoke:\n  olmByCatalog:\n    - {clusterVersions: [v4.18], olm: v1}\n    - {clusterVersions: [\"4.18\"], olm: v0}\n", `"4.18" is already named by smoke.olmByCatalog[0]`, 8, diag.Warning},
		{cats + "smoke:\n  olmByCatalog:\n    - {clusterVersions: [v4.18], olm: v1, version: x}\n", `unknown field "version"`, 7, diag.Error},
	} {
		_, ds, _ := ParseConfig(".catalogbot.yaml", []byte(header+tc.yaml))
		found := false
		for _, d := range ds {
			if strings.Contains(d.Message, tc.want) {
				found = true
				if d.Line != tc.line || d.Severity != tc.sev || d.File != ".catalogbot.yaml" {
					t.Errorf("%q: %s at line %d (%s), want line %d (%s)", tc.yaml, d.Message, d.Line, d.Severity, tc.line, tc.sev)
				}
			}
		}
		if !found {
			t.Errorf("%q: diagnostics %v lack %q", tc.yaml, ds, tc.want)
		}
	}
}

// smoke.podSecurity chooses the Pod Security Standard of the smoke's namespaces: restricted (default)
// or baseline. privileged, which would let a pull request's operator reach the machine running the
// smoke through the privileged kind node, is refused at its line.
func TestSmokePodSecurity(t *testing.T) {
	for _, level := range []string{"restricted", "baseline"} {
		cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+"smoke:\n  enabled: true\n  podSecurity: "+level+"\n"))
		if err != nil || len(ds) != 0 || cfg.Smoke.PodSecurity != level {
			t.Errorf("%s: %+v %v %v", level, cfg.Smoke, ds, err)
		}
	}
	for _, bad := range []string{"privileged", `""`, "Restricted"} {
		_, ds, _ := ParseConfig(".catalogbot.yaml", []byte(header+"smoke:\n  enabled: true\n  podSecurity: "+bad+"\n"))
		found := false
		for _, d := range ds {
			if strings.Contains(d.Message, "smoke.podSecurity:") && strings.Contains(d.Message, "is not one of restricted, baseline") {
				found = true
				if d.Line != 5 || d.File != ".catalogbot.yaml" || d.Severity != diag.Error {
					t.Errorf("%s: %+v, want an error at .catalogbot.yaml:5", bad, d)
				}
			}
		}
		if !found {
			t.Errorf("%s: not refused: %v", bad, ds)
		}
	}
}
