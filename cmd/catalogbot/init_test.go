package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// initIn runs catalogbot init in repo and returns its output and the configuration it wrote.
func initIn(t *testing.T, repo string, args ...string) (out string, cfg *config.Config) {
	t.Helper()
	out, _, code := runCLI(t, append([]string{"init", "--repo", repo}, args...)...)
	if code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	data, err := os.ReadFile(filepath.Join(repo, config.ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg, ds, err := config.ParseConfig(config.ConfigFile, data)
	if err != nil || len(ds) > 0 {
		t.Fatalf("the written configuration: %v %v\n%s", err, ds, data)
	}
	return out, cfg
}

// TestInitCommunityTemplates is the "done": on a copy of the shared template repository with no
// configuration, init writes a complete one (apiVersion/kind, the catalogs pattern and versions, config.yaml's index
// image, maintainers and registries, the owners files, olm.csv.metadata from v4.17 on as the committed
// catalogs have it, opm v1.73.0) and proves it offline: the 18 packages in sync upstream reproduce in
// every catalog, and each of the other four says why (a template ahead of its render, a render no opm
// wrote, a bundle no committed catalog holds).
func TestInitCommunityTemplates(t *testing.T) {
	repo := communityRepo(t)
	if err := os.Remove(filepath.Join(repo, config.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	out, cfg := initIn(t, repo)
	cc := cfg.Catalogs
	if cc.Pattern != "catalogs/{version}" || strings.Join(cc.Versions, " ") != "v4.12 v4.13 v4.14 v4.15 v4.16 v4.17 v4.18 v4.19 v4.20 v4.21 v4.22" || cc.MigrateLevel != "bundle-object-to-csv-metadata" || cc.MigrateFrom != "v4.17" || cc.OPMVersion != "v1.73.0" ||
		cc.Image != "quay.io/redhat/redhat----community-operator-index:{version}" || len(cc.Packages) != 0 {
		t.Errorf("catalogs: %+v", cc)
	}
	if cfg.OwnersFrom != "operators/{package}/ci.yaml" || len(cfg.Maintainers) != 5 || len(cfg.Images.AllowedRegistries) != 2 {
		t.Errorf("owners from %q, maintainers %v, registries %v", cfg.OwnersFrom, cfg.Maintainers, cfg.Images.AllowedRegistries)
	}
	for _, want := range []string{
		"18 of 22 packages reproduce in every catalog they map to (103 of 120 mappings offline)",
		"  ok   dotvirt-operator: reproduces in 5 catalogs (opm v1.73.0)",
		"  FAIL ecr-secret-operator: reproduces in 4 of 11 catalogs",
		"re-rendering adds 2 entries (ecr-secret-operator.v0.5.1 to alpha, ecr-secret-operator.v0.6.0 to alpha)",
		"  FAIL kubebrowser: reproduces in 0 of 1 catalog",
		"not in opm's form (hand-written or reformatted)",
		"v4.18, v4.19, v4.20, v4.21, v4.22: does not render:",
		"re-rendering changes the upgrade edges (replaces, skips, skipRange) of released 1 entry (openshift-integration-operator.v0.8.2 in candidate-v0)",
		"  validate v4.22: pass",
		"# v4.22: OpenShift 4.22, Kubernetes 1.35",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}

	// never overwrites without --force
	if err := cliErr("init", "--repo", repo); err == nil || !strings.Contains(err.Error(), "without --force") || exitCode(&bytes.Buffer{}, err) != 2 {
		t.Errorf("init over an existing configuration: %v", err)
	}
	initIn(t, repo, "--force")
}

// TestInitPerPackageOPMAndDirectory: three real packages of community-operators-prod v4.20 as upstream
// lays them out (shareddata.UpstreamCheckout). init pins clusterpulse, which only opm v1.46.0's rules
// reproduce, leaves kairos-operator on v1.73.0, declares that directory konflux holds
// konflux-operator, and every package reproduces; the drift gate with the written configuration passes
// offline, and fails on the pinned package without its pin, saying which opm reproduces the file.
func TestInitPerPackageOPMAndDirectory(t *testing.T) {
	repo := shareddata.UpstreamCheckout(t)
	out, cfg := initIn(t, repo)
	want := map[string]config.CatalogPackage{"clusterpulse": {OPMVersion: "v1.46.0"}, "konflux": {Package: "konflux-operator"}}
	if len(cfg.Catalogs.Packages) != 2 || cfg.Catalogs.Packages["clusterpulse"] != want["clusterpulse"] || cfg.Catalogs.Packages["konflux"] != want["konflux"] ||
		cfg.Catalogs.OPMVersion != "v1.73.0" || cfg.Catalogs.MigrateLevel != "bundle-object-to-csv-metadata" || cfg.Catalogs.MigrateFrom != "" {
		t.Errorf("catalogs: %+v", cfg.Catalogs)
	}
	if !strings.Contains(out, "3 of 3 packages reproduce in every catalog they map to (6 of 6 mappings offline)") ||
		!strings.Contains(out, "  ok   konflux (package konflux-operator): reproduces in 2 catalogs (opm v1.73.0)") ||
		!strings.Contains(out, "  ok   clusterpulse: reproduces in 2 catalogs (opm v1.46.0)") {
		t.Errorf("init's proof:\n%s", out)
	}
	gate := []string{"render", "--repo", repo, "--check", "--offline", "--seed-from", repo, "--template-cache-dir", t.TempDir()}
	if out, _, code := runCLI(t, gate...); code != 0 {
		t.Fatalf("render --check with init's configuration: exit %d\n%s", code, out)
	}

	file := filepath.Join(repo, config.ConfigFile)
	data, _ := os.ReadFile(file)
	unpinned := strings.Replace(string(data), "      opmVersion: v1.46.0\n", "", 1)
	if unpinned == string(data) {
		t.Fatal("no pin to remove")
	}
	if err := os.WriteFile(file, []byte(unpinned), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, gate...)
	if code != 1 || !strings.Contains(out, "catalogs/v4.20/clusterpulse/catalog.yaml differs from opm v1.73.0's render of operators/clusterpulse/catalog-templates/semver.yaml for catalog v4.20, and is opm v1.46.0's render byte for byte") ||
		!strings.Contains(out, "catalogs.packages.clusterpulse.opmVersion: v1.46.0") {
		t.Errorf("the drift of the unpinned package should name the opm that reproduces it: exit %d\n%s", code, out)
	}
}

// TestInitSingleCatalog: a checkout that is one catalog directory gets catalog.dir and its format, and
// the proof validates it.
func TestInitSingleCatalog(t *testing.T) {
	repo := t.TempDir()
	src := filepath.Join(shareddata.Dir(t, "catalogs", "community-operators-prod-v4.20"), "kairos-operator", "catalog.yaml")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "index", "kairos-operator"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, "index", "kairos-operator", "catalog.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, cfg := initIn(t, repo)
	if cfg.Catalog.Dir != "index" || cfg.Catalog.Format != "yaml" || cfg.MultiCatalog() || !strings.Contains(out, "proof: validate index: pass") {
		t.Errorf("catalog %+v:\n%s", cfg.Catalog, out)
	}
}

// TestInitReferencesConfig: a checkout rendered from a references config (kubedoop-catalog's real
// catalog.yaml, its rendered spark-k8s-operator beside it) gets references.file and the directory the
// config renders into; the proof validates that catalog.
func TestInitReferencesConfig(t *testing.T) {
	src := shareddata.Dir(t, "refconfigs", "zncdatadev-kubedoop-catalog")
	repo := t.TempDir()
	refs, err := os.ReadFile(filepath.Join(src, "catalog.yaml@373d5c8"))
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := os.ReadFile(filepath.Join(src, "rendered-catalog@af13ed5", "spark-k8s-operator", "index.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "zncdata-catalogs", "spark-k8s-operator"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"catalog.yaml": refs, "zncdata-catalogs/spark-k8s-operator/index.yaml": rendered} {
		if err := os.WriteFile(filepath.Join(repo, filepath.FromSlash(name)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, cfg := initIn(t, repo)
	if cfg.References.File != "catalog.yaml" || cfg.Catalog.Dir != "zncdata-catalogs" || cfg.Catalog.Format != "yaml" || !strings.Contains(out, "proof: validate zncdata-catalogs: pass") || !strings.Contains(out, "not proved offline") {
		t.Errorf("references %q, catalog %+v:\n%s", cfg.References.File, cfg.Catalog, out)
	}
}
