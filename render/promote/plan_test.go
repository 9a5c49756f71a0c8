package promote

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
)

// strategyRepo is a repository of one package per strategy case, mapping v4.20 and v4.21.
func strategyRepo(t *testing.T) string {
	t.Helper()
	ci := func(extra, names string) string {
		return "---\nfbc:\n  enabled: true\n" + extra + "  catalog_mapping:\n    - template_name: basic.yaml\n      type: olm.template.basic\n      catalog_names: [" + names + "]\n"
	}
	files := map[string]string{
		"operators/always/ci.yaml":          ci("  version_promotion_strategy: always\n", "v4.20, v4.21"),
		"operators/review/ci.yaml":          ci("  version_promotion_strategy: review-needed\n", "v4.20, v4.21"),
		"operators/default/ci.yaml":         ci("", "v4.21"),
		"operators/never/ci.yaml":           ci("  version_promotion_strategy: never\n", "v4.21"),
		"operators/typo/ci.yaml":            ci("  version_promotion_strategy: allways\n", "v4.21"),
		"operators/promoted/ci.yaml":        ci("", "v4.21, v4.22"),
		"operators/old/ci.yaml":             ci("", "v4.20"),
		"operators/disabled/ci.yaml":        "fbc:\n  enabled: false\n",
		"operators/stray/ci.yaml":           ci("", "v4.21"),
		"catalogs/v4.22/stray/catalog.yaml": "{}\n",
		"operators/nothing/README.md":       "no ci.yaml\n",
	}
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

var strategyCats = []template.Catalog{{Name: "v4.20", Dir: "catalogs/v4.20"}, {Name: "v4.21", Dir: "catalogs/v4.21"}, {Name: "v4.22", Dir: "catalogs/v4.22"}}

// Every package is promoted as its fbc.version_promotion_strategy says (absent: review-needed); the
// others are skipped with their reason, and what needs fixing is a diagnostic on its line.
func TestPlanFollowsStrategies(t *testing.T) {
	p, err := Plan(strategyRepo(t), strategyCats, "v4.22", "", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Source.Name != "v4.21" || p.Target.Name != "v4.22" {
		t.Errorf("source %s, target %s", p.Source.Name, p.Target.Name)
	}
	var got []string
	for _, pk := range p.Packages {
		got = append(got, pk.Dir+":"+string(pk.Strategy)+":"+map[bool]string{true: "review", false: "no-review"}[pk.ReviewNeeded])
	}
	if want := "always:always:no-review default:review-needed:review review:review-needed:review"; strings.Join(got, " ") != want {
		t.Errorf("promoted %v, want %s", got, want)
	}
	if pk := p.Packages[0]; pk.Title != "Promote operator always to catalog version 4.22." ||
		strings.Join(pk.Files(), " ") != "operators/always/ci.yaml catalogs/v4.22/always/catalog.yaml" || pk.Job.Template != "operators/always/catalog-templates/basic.yaml" {
		t.Errorf("always: %q %v %s", pk.Title, pk.Files(), pk.Job.Template)
	}
	var skipped []string
	for _, s := range p.Skipped {
		skipped = append(skipped, s.Dir)
	}
	if want := "disabled never old promoted typo"; strings.Join(skipped, " ") != want {
		t.Errorf("skipped %v, want %s", skipped, want)
	}
	var ds []string
	for _, d := range p.Diagnostics {
		ds = append(ds, string(d.Severity)+" "+d.File+":"+strconv.Itoa(d.Line))
	}
	if want := "error operators/stray/ci.yaml:1 warning operators/typo/ci.yaml:4"; strings.Join(ds, " ") != want {
		t.Errorf("diagnostics %v, want %s", p.Diagnostics, want)
	}
}

// A package named on the command line that a promotion of every package would skip is refused, on the
// ci.yaml line that says why.
func TestPlanNamedPackageRefused(t *testing.T) {
	root := strategyRepo(t)
	for pkg, want := range map[string]string{
		"never":    "operators/never/ci.yaml:4: error: fbc.version_promotion_strategy is never",
		"typo":     `operators/typo/ci.yaml:4: error: fbc.version_promotion_strategy "allways" is not always, review-needed or never`,
		"promoted": "operators/promoted/ci.yaml:7: error: maps v4.22 already (template basic.yaml)",
		"old":      "operators/old/ci.yaml:5: error: maps no template to v4.21, the catalog before v4.22",
		"nothing":  "no package directory operators/nothing with a ci.yaml",
	} {
		p, err := Plan(root, strategyCats, "v4.22", pkg, Config{})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Packages) != 0 || len(p.Diagnostics) != 1 || p.Diagnostics[0].Severity != diag.Error || !strings.Contains(p.Diagnostics[0].String(), want) {
			t.Errorf("%s: %d promoted, %v; want %q", pkg, len(p.Packages), p.Diagnostics, want)
		}
	}
}

// A catalog the configuration does not list is a usage error naming the configuration line to edit; the
// first catalog has none before it.
func TestPlanRefusesUnlistedCatalog(t *testing.T) {
	root := strategyRepo(t)
	cfg := Config{File: ".catalogbot.yaml", Data: []byte("apiVersion: catalogbot.dev/v1\nkind: Config\ncatalogs:\n  pattern: catalogs/{version}\n  versions: [v4.20, v4.21, v4.22]\n")}
	_, err := Plan(root, strategyCats, "v4.23", "", cfg)
	if err == nil || diag.CategoryOf(err) != diag.Usage || !strings.Contains(err.Error(), ".catalogbot.yaml:5: catalogs.versions lists v4.20, v4.21, v4.22, not v4.23: add v4.23 there first") {
		t.Errorf("v4.23: %v", err)
	}
	_, err = Plan(root, strategyCats, "v4.20", "", cfg)
	if err == nil || diag.CategoryOf(err) != diag.Usage || !strings.Contains(err.Error(), "no catalog before it") {
		t.Errorf("v4.20: %v", err)
	}
	if _, err := Plan(root, strategyCats, "v4.22", "../always", cfg); err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("a package path: %v", err)
	}
	if p, err := Plan(root, strategyCats, "4.22", "always", cfg); err != nil || len(p.Packages) != 1 {
		t.Errorf("4.22 (upstream's spelling) is v4.22: %v", err)
	}
}

// ConfigLine names where the configuration lists its catalogs.
func TestConfigLine(t *testing.T) {
	for in, want := range map[string]string{
		"catalogs:\n  pattern: catalogs/{version}\n  versions: [v4.1]\n": "3 catalogs.versions",
		"catalogs:\n  list:\n    - {name: a, dir: a}\n":                  "2 catalogs.list",
		"kind: Config\ncatalogs:\n  pattern: catalogs/{version}\n":       "3 catalogs.pattern (without catalogs.versions, the directories it matches; list them in catalogs.versions)",
		"kind: Config\n": "1 catalogs",
	} {
		line, key := ConfigLine([]byte(in))
		if got := strconv.Itoa(line) + " " + key; got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
}
