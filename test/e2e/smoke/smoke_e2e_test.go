//go:build e2e

package smoke

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/diag"
)

// lane is what hack/kind-offline/build-images.sh writes to lane.json.
type lane struct {
	NodeImage     string                 `json:"nodeImage"`
	OLMManifests  string                 `json:"olmManifests"`
	OPMLayout     string                 `json:"opmLayout"`
	OPMBinary     string                 `json:"opmBinary"`
	Catalogs      map[string]laneCatalog `json:"catalogs"`
	Bundles       string                 `json:"bundles"`
	ImageArchives []string               `json:"imageArchives"`
	// OLMv1 is olmv1.json (build-olmv1.sh): OLM v1's install directory and images.
	OLMv1 string `json:"olmv1"`
}

// laneCatalog is one test catalog: its image (by tag and digest), the image's archive and its FBC.
type laneCatalog struct {
	Image   string `json:"image"`
	Digest  string `json:"digest"`
	Archive string `json:"archive"`
	FBC     string `json:"fbc"`
}

// ref is the catalog image by digest, as OLM must be given it.
func (c laneCatalog) ref() string {
	repo := c.Image
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	return repo + "@" + c.Digest
}

// laneBundle is one bundle image of bundles.json (imagetool testcatalog).
type laneBundle struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	Image   string `json:"image"`
	Archive string `json:"archive"`
	Loaded  bool   `json:"loaded"`
}

// The fixtures' names (hack/kind-offline/cmd/imagetool/testcatalog.go).
const (
	good       = "smoke-good"
	fresh      = "smoke-new"
	broken     = "smoke-broken"
	unpullable = "smoke-unpullable"
	badUnpack  = "smoke-badunpack"
	needsDep   = "smoke-needsdep"
	ownNS      = "smoke-ownns" // supports only OwnNamespace: OLM v0 installs it, OLM v1 refuses it
	// hostile's operator pod is privileged, runs as root and mounts the node's / and hostMarker:
	// Pod Security Admission must refuse it in the smoke's namespaces.
	hostile = "smoke-hostile"
	// hostMarker is the node directory the kubelet would create for hostile's pod (imagetool's
	// HostMarker, a hostPath of type DirectoryOrCreate).
	hostMarker = "/var/tmp/catalogbot-smoke-hostile-was-here"
	clusterE2E = "catalogbot-e2e"
)

func loadLane(t *testing.T) lane {
	t.Helper()
	p := os.Getenv("CATALOGBOT_KIND_OFFLINE")
	if p == "" {
		t.Skip("KIND OFFLINE LANE NOT CONFIGURED: CATALOGBOT_KIND_OFFLINE is unset (run bash hack/kind-offline/lane.sh)")
	}
	var l lane
	readJSON(t, p, &l)
	for _, c := range []string{"base", "head", "base-inline", "head-inline"} {
		if l.Catalogs[c].Digest == "" {
			t.Fatalf("lane description %s has no %s catalog: rebuild the cache (lane.sh build-cache)", p, c)
		}
	}
	return l
}

func readJSON(t *testing.T, p string, v any) {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("lane: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("lane: %s: %v", p, err)
	}
}

func loadCatalog(t *testing.T, dir string) *catalog.Catalog {
	t.Helper()
	res, err := catalog.LoadDir(context.Background(), dir, catalog.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) > 0 {
		t.Fatalf("test catalog %s: %v", dir, res.Diagnostics)
	}
	return res.Catalog
}

func requireDocker(t *testing.T, image string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "docker", "info").CombinedOutput(); err != nil {
		t.Skipf("DOCKER CANNOT START OR DOES NOT ANSWER, NO CLUSTER TO TEST AGAINST: %v: %s", err, lastLine(out))
	}
	if out, err := exec.CommandContext(ctx, "docker", "image", "inspect", image).CombinedOutput(); err != nil {
		t.Fatalf("node image %s is not loaded (lane.sh loads it): %v: %s", image, err, lastLine(out))
	}
}

// requireNoCluster fails when any kind cluster exists: one kind cluster at a time on the lane's machines.
func requireNoCluster(t *testing.T) {
	t.Helper()
	names, err := cluster.NewProvider().List()
	if err != nil {
		t.Fatalf("listing kind clusters: %v", err)
	}
	if len(names) > 0 {
		t.Fatalf("ANOTHER KIND CLUSTER EXISTS (%s): ONE CLUSTER AT A TIME ON THIS MACHINE; NOT STARTED", strings.Join(names, ", "))
	}
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestSmokeInKind creates one kind cluster, installs OLM from manifests and runs three passes in it:
//   - csv-metadata catalogs (no inline objects, what v4.17+ catalogs carry), base then head: smoke-good
//     installs from the base and upgrades when the CatalogSource serves the head, smoke-new installs
//     fresh, and four packages fail, each with a diagnostic naming its bundle and the cause;
//   - the same upgrade and fresh install from catalogs in opm render's default form (olm.bundle.object);
//   - `catalogbot pr` with smoke enabled on a repository whose pull request makes that change (pr.go);
//   - one check of the GitHub App on that pull request, bot.yaml's smoke section naming the cluster
//     (bot_test.go);
//   - OLM v1 next to OLM v0 on the csv-metadata catalogs (olmv1_lane_test.go): the catalogs and bundle
//     images pushed to the lane's in-cluster registry, smoke.Run with OLM "v1".
//
// Every bundle is an image referenced by digest, loaded into the node, unpacked by OLM's Job.
func TestSmokeInKind(t *testing.T) {
	l := loadLane(t)
	requireDocker(t, l.NodeImage)
	requireNoCluster(t)
	// The kind config is a file of this checkout, not a cached artifact: the cache outlives checkouts.
	kindConfig, err := os.ReadFile(filepath.Join("..", "..", "..", "hack", "kind-offline", "kind-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var bundles []laneBundle
	readJSON(t, l.Bundles, &bundles)
	var bundleArchives []string
	for _, b := range bundles {
		if b.Loaded {
			bundleArchives = append(bundleArchives, b.Archive)
		}
	}
	archives := append(slices.Clone(l.ImageArchives), bundleArchives...)
	// Interrupting the test cancels Run; the cleanup deletes the cluster.
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(sigCtx, 25*time.Minute)
	defer cancel()
	keep := os.Getenv("CATALOGBOT_SMOKE_KEEP") == "1"
	t.Cleanup(func() {
		if keep {
			t.Logf("kept kind cluster %s (CATALOGBOT_SMOKE_KEEP=1)", clusterE2E)
			return
		}
		if err := cluster.NewProvider().Delete(clusterE2E, os.DevNull); err != nil {
			t.Errorf("deleting kind cluster %s: %v", clusterE2E, err)
		}
	})

	base, head := l.Catalogs["base"], l.Catalogs["head"]
	all := []string{good, fresh, broken, unpullable, badUnpack, needsDep, ownNS, hostile}
	headCatalog := loadCatalog(t, head.FBC)
	plan := smoke.PlanChange(loadCatalog(t, base.FBC), headCatalog, all, nil)
	modes := map[string][]string{}
	for _, p := range all {
		modes[p] = smoke.InstallModesOf(headCatalog, p, "")
	}
	if !slices.Equal(plan.FromBase, []string{good}) || plan.Expect[good] != good+".v0.2.0" {
		t.Fatalf("plan = %+v", plan)
	}
	ok := t.Run("csv-metadata catalogs, base to head, failures", func(t *testing.T) {
		start := time.Now()
		res, err := smoke.Run(ctx, smoke.Options{
			ClusterName: clusterE2E, CreateCluster: true, KeepCluster: true, NodeImage: l.NodeImage, KindConfig: string(kindConfig),
			OLMManifestsDir: l.OLMManifests,
			CatalogImage:    head.ref(), CatalogArchive: head.Archive,
			BaseCatalogImage: base.ref(), BaseCatalogArchive: base.Archive,
			ImageArchives: archives,
			Packages:      plan.Packages, FromBase: plan.FromBase, Expect: plan.Expect, BundleImages: plan.BundleImages,
			InstallModes: modes, Timeout: 5 * time.Minute, Parallel: len(all), CrashLoopRestarts: 2, Progress: os.Stderr,
		})
		t.Logf("smoke.Run took %s", time.Since(start).Round(time.Second))
		logResult(t, res)
		if !errors.Is(err, smoke.ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid {
			t.Fatalf("Run error = %v (category %v); want the four broken packages and the hostile one to fail and nothing else", err, diag.CategoryOf(err))
		}
		if !res.ClusterCreated || !res.OLMInstalled {
			t.Errorf("clusterCreated=%t olmInstalled=%t, want both", res.ClusterCreated, res.OLMInstalled)
		}
		by := byPackage(res)
		requireUpgraded(t, by[good])
		requireFresh(t, by[fresh])
		if p := by[ownNS]; !p.Succeeded || p.InstallMode != "OwnNamespace" || p.CSV != ownNS+".v0.1.0" {
			t.Errorf("%s: %+v; want OLM v0 to install it in OwnNamespace mode", ownNS, p)
		}
		requireFailure(t, by[broken], "crash-loop", broken+".v0.1.0",
			"FATAL: SMOKE_CRASH=1: this build crashes on purpose", // the crashing container's own log
			"events of namespace "+smoke.NamespaceFor(broken))
		requireFailure(t, by[unpullable], "bundle-image-unpullable", unpullable+".v0.1.0",
			"catalogbot.local/smoke/bundle-unpullable@sha256:", "bundle-unpack pod")
		requireFailure(t, by[badUnpack], "unpack-failed", badUnpack+".v0.1.0",
			"container pull exited 1", "metadata")
		requireFailure(t, by[needsDep], "resolution-failed", needsDep+".v0.1.0",
			"missing.catalogbot.io")
		requirePodSecurityRefused(t, by[hostile], clusterE2E)
	})
	if !ok {
		return // the cluster may not be there: the other passes would only repeat the failure
	}

	t.Run("inline catalogs, base to head", func(t *testing.T) {
		bi, hi := l.Catalogs["base-inline"], l.Catalogs["head-inline"]
		plan := smoke.PlanChange(loadCatalog(t, bi.FBC), loadCatalog(t, hi.FBC), []string{good, fresh}, nil)
		start := time.Now()
		res, err := smoke.Run(ctx, smoke.Options{
			ClusterName:  clusterE2E,
			CatalogImage: hi.ref(), CatalogArchive: hi.Archive, BaseCatalogImage: bi.ref(), BaseCatalogArchive: bi.Archive,
			Packages: plan.Packages, FromBase: plan.FromBase, Expect: plan.Expect, BundleImages: plan.BundleImages,
			Timeout: 5 * time.Minute, Parallel: 2, Progress: os.Stderr,
		})
		t.Logf("smoke.Run took %s", time.Since(start).Round(time.Second))
		logResult(t, res)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		by := byPackage(res)
		requireUpgraded(t, by[good])
		requireFresh(t, by[fresh])
	})

	t.Run("catalogbot pr", func(t *testing.T) { testPipeline(ctx, t, l, bundleArchives) })
	t.Run("bot check", func(t *testing.T) { testBot(ctx, t, l, bundleArchives) })
	t.Run("OLM v1, csv-metadata catalogs, base to head, failures", func(t *testing.T) { testOLMv1(ctx, t, l, bundles, clusterE2E) })

	if dir := os.Getenv("CATALOGBOT_SMOKE_STARTUP_CATALOG"); dir != "" {
		t.Run("catalog start-up", func(t *testing.T) { testStartup(ctx, t, l, dir) })
	} else {
		t.Log("CATALOG START-UP MEASUREMENT NOT RUN: set CATALOGBOT_SMOKE_STARTUP_CATALOG to a catalog directory")
	}
}

// requirePodSecurityRefused checks the hostile package: its install failed with the admission's reason
// as the lead diagnostic, and its pod never ran on the node (the kubelet never created hostMarker).
func requirePodSecurityRefused(t *testing.T, p smoke.PackageResult, cluster string) {
	t.Helper()
	requireFailure(t, p, "pod-security", hostile+".v0.1.0", `violates PodSecurity "restricted:latest"`, "privileged", "hostPath")
	if len(p.Diagnostics) > 0 && !strings.Contains(p.Diagnostics[0].Message, `violates PodSecurity "restricted:latest"`) {
		t.Errorf("%s: the lead diagnostic does not give the admission's reason: %s", hostile, p.Diagnostics[0].Message)
	}
	node := cluster + "-control-plane"
	out, err := exec.Command("docker", "exec", node, "test", "-e", hostMarker).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Errorf("%s's pod ran on node %s: %s exists", hostile, node, hostMarker)
	case !errors.As(err, &exit) || exit.ExitCode() != 1:
		t.Errorf("checking node %s for %s: %v: %s", node, hostMarker, err, out)
	}
}

func logResult(t *testing.T, res smoke.Result) {
	out, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("result:\n%s", out)
}

func byPackage(res smoke.Result) map[string]smoke.PackageResult {
	m := map[string]smoke.PackageResult{}
	for _, p := range res.Packages {
		m[p.Package] = p
	}
	return m
}

func requireUpgraded(t *testing.T, p smoke.PackageResult) {
	t.Helper()
	if !p.Succeeded || !p.FromBase || p.CSV != good+".v0.2.0" || p.Phase != "Succeeded" || p.UpgradedFrom != good+".v0.1.0" {
		t.Errorf("%s: succeeded=%t fromBase=%t csv=%q phase=%q upgradedFrom=%q; want v0.2.0 Succeeded, upgraded from the base's v0.1.0",
			good, p.Succeeded, p.FromBase, p.CSV, p.Phase, p.UpgradedFrom)
	}
}

func requireFresh(t *testing.T, p smoke.PackageResult) {
	t.Helper()
	if !p.Succeeded || p.FromBase || p.CSV != fresh+".v0.1.0" || p.UpgradedFrom != "" {
		t.Errorf("%s: %+v; want a fresh install of v0.1.0", fresh, p)
	}
}

// requireFailure checks a failed package: its lead diagnostic has the rule and names the bundle, and the
// diagnostics together say each of wants.
func requireFailure(t *testing.T, p smoke.PackageResult, rule, bundle string, wants ...string) {
	t.Helper()
	if p.Succeeded || len(p.Diagnostics) == 0 {
		t.Errorf("%s: %+v; want a failure", p.Package, p)
		return
	}
	if d := p.Diagnostics[0]; d.Rule != rule || d.Bundle != bundle {
		t.Errorf("%s: lead diagnostic %s (bundle %q); want rule %s naming bundle %s", p.Package, d, d.Bundle, rule, bundle)
	}
	var all strings.Builder
	for _, d := range p.Diagnostics {
		all.WriteString(d.Message + "\n")
	}
	for _, want := range wants {
		if !strings.Contains(all.String(), want) {
			t.Errorf("%s: diagnostics lack %q", p.Package, want)
		}
	}
}
