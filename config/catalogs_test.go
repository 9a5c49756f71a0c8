package config

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

const header = "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\n"

// TestCatalogsPattern resolves the community-operators pattern against the shared data's catalogs.
func TestCatalogsPattern(t *testing.T) {
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  pattern: catalogs/{version}
  image: quay.io/example/index:{version}
  migrateLevel: bundle-object-to-csv-metadata
  migrateFrom: v4.17
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	if !cfg.MultiCatalog() {
		t.Fatal("not multi-catalog")
	}
	cats, err := cfg.ResolveCatalogs(shareddata.Dir(t, "fbc-templates"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 11 || cats[0].Name != "v4.12" || cats[10].Name != "v4.22" {
		t.Fatalf("catalogs %+v", cats)
	}
	for _, c := range cats {
		wantLevel := ""
		if c.Name >= "v4.17" {
			wantLevel = "bundle-object-to-csv-metadata"
		}
		if c.Dir != "catalogs/"+c.Name || c.Image != "quay.io/example/index:"+c.Name || c.MigrateLevel != wantLevel {
			t.Errorf("%+v", c)
		}
	}
	if cats[4].OpenShift != "4.16" || cats[4].Kubernetes != "1.29" {
		t.Errorf("v4.16 runs %+v, want OpenShift 4.16 on Kubernetes 1.29", cats[4])
	}
}

func TestCatalogsListAndVersions(t *testing.T) {
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  list:
  - {name: old, dir: catalogs/old, image: quay.io/e/index:old, openshift: "4.9"}
  - {name: new, dir: catalogs/new, openshift: "4.20", kubernetes: "1.33", migrateLevel: bundle-object-to-csv-metadata}
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	cats, err := cfg.ResolveCatalogs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 2 || cats[0].Kubernetes != "1.22" || cats[1].Kubernetes != "1.33" || cats[1].MigrateLevel == "" || cats[0].Image != "quay.io/e/index:old" {
		t.Errorf("%+v", cats)
	}
	single, _, err := ParseConfig(".catalogbot.yaml", []byte(header+"catalog: {dir: catalog, format: yaml}\n"))
	if err != nil || single.MultiCatalog() {
		t.Errorf("a single-catalog configuration is multi-catalog or fails: %v", err)
	}
}

func TestCatalogsRefused(t *testing.T) {
	cases := map[string]string{
		"both forms":         "catalogs: {pattern: 'c/{version}', list: [{name: a, dir: a}]}\n",
		"no placeholder":     "catalogs: {pattern: catalogs/all}\n",
		"shared image tag":   "catalogs: {pattern: 'c/{version}', image: quay.io/e/index:latest}\n",
		"escaping pattern":   "catalogs: {pattern: '../{version}'}\n",
		"unknown level":      "catalogs: {pattern: 'c/{version}', migrateLevel: everything}\n",
		"bad openshift":      "catalogs: {list: [{name: a, dir: a, openshift: '5.1'}]}\n",
		"duplicate name":     "catalogs: {list: [{name: a, dir: a}, {name: a, dir: b}]}\n",
		"duplicate dir":      "catalogs: {list: [{name: a, dir: a}, {name: b, dir: a}]}\n",
		"escaping dir":       "catalogs: {list: [{name: a, dir: /etc}]}\n",
		"image without list": "catalogs: {image: 'quay.io/e/i:{version}'}\n",
		"unknown field":      "catalogs: {pattern: 'c/{version}', tagz: x}\n",
		"unsupported opm":    "catalogs: {pattern: 'c/{version}', opmVersion: v1.50.0}\n",
		"opm without v":      "catalogs: {list: [{name: a, dir: a}], opmVersion: 1.46.0}\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			_, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+text))
			if err == nil {
				t.Fatal("accepted")
			}
			found := false
			for _, d := range ds {
				if strings.Contains(d.Message, "catalogs") && d.Line == 3 {
					found = true
				}
			}
			if !found {
				t.Errorf("no diagnostic on the catalogs line: %v", ds)
			}
		})
	}
}

// smoke.clusterVersions limits the smoked catalogs by name or OpenShift version; it is refused without
// catalogs and when empty (a limit that smokes nothing while smoke.enabled asks for installs).
func TestSmokeClusterVersions(t *testing.T) {
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  pattern: catalogs/{version}
smoke:
  enabled: true
  clusterVersions: [v4.12, "4.22"]
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	for _, tc := range []struct {
		cat  Catalog
		want bool
	}{
		{Catalog{Name: "v4.12", OpenShift: "4.12"}, true},
		{Catalog{Name: "v4.22", OpenShift: "4.22"}, true},
		{Catalog{Name: "v4.13", OpenShift: "4.13"}, false},
		{Catalog{Name: "v4.2", OpenShift: "4.2"}, false},
		{Catalog{Name: "4.22-beta"}, false},
	} {
		if got := cfg.Smoke.SmokesCatalog(tc.cat); got != tc.want {
			t.Errorf("SmokesCatalog(%s) = %v", tc.cat.Name, got)
		}
	}
	if all := (SmokeConfig{}); !all.SmokesCatalog(Catalog{Name: "anything"}) {
		t.Error("no limit must smoke every catalog")
	}
	for _, tc := range []struct{ yaml, want string }{
		{"smoke:\n  clusterVersions: [v4.12]\n", "smoke.clusterVersions: set without catalogs"},
		{"catalogs:\n  pattern: catalogs/{version}\nsmoke:\n  clusterVersions: []\n", "smoke.clusterVersions: empty"},
		{"catalogs:\n  pattern: catalogs/{version}\nsmoke:\n  clusterVersions: [../x]\n", `"../x" is not a catalog name`},
		{"catalogs:\n  pattern: catalogs/{version}\nsmoke:\n  clusterVersions: v4.12\n", "smoke.clusterVersions"},
	} {
		_, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+tc.yaml))
		var msgs []string
		for _, d := range ds {
			msgs = append(msgs, d.Message)
		}
		if err == nil || !strings.Contains(strings.Join(msgs, "\n"), tc.want) {
			t.Errorf("%q: %v %q, want an error %q", tc.yaml, err, msgs, tc.want)
		}
	}
}

// catalogs.opmVersion pins the opm whose rendering every catalog keeps, in either form; one catalogbot does
// not reproduce is refused on its line (TestCatalogsRefused), never rendered with another opm's rules.
func TestCatalogsOPMVersion(t *testing.T) {
	for _, text := range []string{
		"catalogs: {pattern: 'c/{version}', versions: [v4.16, v4.17], opmVersion: v1.46.0}\n",
		"catalogs: {list: [{name: v4.16, dir: c/v4.16}, {name: v4.17, dir: c/v4.17}], opmVersion: v1.46.0}\n",
	} {
		cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+text))
		if err != nil {
			t.Fatalf("%s: %v %v", text, err, ds)
		}
		cats, err := cfg.ResolveCatalogs(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if len(cats) != 2 || cats[0].OPMVersion != "v1.46.0" || cats[1].OPMVersion != "v1.46.0" {
			t.Errorf("%s: %+v", text, cats)
		}
	}
}

// catalogs.packages pins one package's opm and names the package a directory holds; every catalog
// carries them, the owners file of a declared package is its directory's, and a bad entry is refused on
// its line: an opm catalogbot does not reproduce, a name that is no package name, two directories
// claiming one package (the second could render over the first's catalog files), packages without
// catalogs.
func TestCatalogsPackages(t *testing.T) {
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+`ownersFrom: operators/{package}/ci.yaml
catalogs:
  pattern: c/{version}
  versions: [v4.20]
  packages:
    clusterpulse: {opmVersion: v1.46.0}
    konflux: {package: konflux-operator}
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	cats, err := cfg.ResolveCatalogs(t.TempDir())
	if err != nil || len(cats) != 1 || cats[0].Packages["clusterpulse"].OPMVersion != "v1.46.0" || cats[0].Packages["konflux"].Package != "konflux-operator" {
		t.Fatalf("%v %+v", err, cats)
	}
	if f := cfg.OwnersFilePath("konflux-operator"); f != "operators/konflux/ci.yaml" {
		t.Errorf("konflux-operator's owners file %q", f)
	}
	if p, ok := cfg.OwnersFilePackage("operators/konflux/ci.yaml"); !ok || p != "konflux-operator" {
		t.Errorf("operators/konflux/ci.yaml is %q's", p)
	}
	if f := cfg.OwnersFilePath("clusterpulse"); f != "operators/clusterpulse/ci.yaml" {
		t.Errorf("clusterpulse's owners file %q", f)
	}
	for _, tc := range []struct {
		yaml, want string
		line       int
	}{
		{"catalogs:\n  pattern: c/{version}\n  packages:\n    a: {opmVersion: v1.50.0}\n", `catalogs.packages.a.opmVersion: "v1.50.0" is not an opm`, 6},
		{"catalogs:\n  pattern: c/{version}\n  packages:\n    a: {package: ../b}\n", `catalogs.packages.a.package: "../b" is not a package name`, 6},
		{"catalogs:\n  pattern: c/{version}\n  packages:\n    a: {package: x}\n    b: {package: x}\n", `catalogs.packages.b.package: package "x" is held by another directory too`, 7},
		{"catalogs:\n  pattern: c/{version}\n  packages:\n    a: {package: b}\n    b: {opmVersion: v1.46.0}\n", `catalogs.packages.a.package: package "b" is held by another directory too`, 6},
		{"catalogs:\n  packages:\n    a: {opmVersion: v1.46.0}\n", "catalogs.packages: set without catalogs", 5},
	} {
		_, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+tc.yaml))
		found := false
		for _, d := range ds {
			found = found || strings.Contains(d.Message, tc.want) && d.Line == tc.line
		}
		if err == nil || !found {
			t.Errorf("%q: %v, want %q on line %d: %v", tc.yaml, err, tc.want, tc.line, ds)
		}
	}
}
