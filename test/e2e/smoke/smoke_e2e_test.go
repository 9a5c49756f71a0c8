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
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/diag"
)

// lane is what hack/kind-offline/build-images.sh writes to lane.json.
type lane struct {
	NodeImage      string   `json:"nodeImage"`
	OLMManifests   string   `json:"olmManifests"`
	CatalogImage   string   `json:"catalogImage"`
	CatalogDigest  string   `json:"catalogDigest"`
	CatalogArchive string   `json:"catalogArchive"`
	ImageArchives  []string `json:"imageArchives"`
	GoodPackage    string   `json:"goodPackage"`
	GoodFrom       string   `json:"goodFrom"`
	GoodHead       string   `json:"goodHead"`
	BrokenPackage  string   `json:"brokenPackage"`
}

func loadLane(t *testing.T) lane {
	t.Helper()
	p := os.Getenv("CATALOGBOT_KIND_OFFLINE")
	if p == "" {
		t.Skip("KIND OFFLINE LANE NOT CONFIGURED: CATALOGBOT_KIND_OFFLINE is unset (run bash hack/kind-offline/lane.sh)")
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("lane description: %v", err)
	}
	var l lane
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatalf("lane description %s: %v", p, err)
	}
	return l
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

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.LastIndex(s, "\n"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestSmokeInKind creates a kind cluster, installs OLM from manifests, serves the test catalog by digest
// and installs the good operator (as an upgrade from its first version) and the broken one in parallel.
func TestSmokeInKind(t *testing.T) {
	l := loadLane(t)
	requireDocker(t, l.NodeImage)
	// The kind config is a file of this checkout, not a cached artifact: the cache outlives checkouts.
	kindConfig, err := os.ReadFile(filepath.Join("..", "..", "..", "hack", "kind-offline", "kind-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	repo := l.CatalogImage
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	// Interrupting the test cancels Run, which then deletes the cluster it created.
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(sigCtx, 15*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := smoke.Run(ctx, smoke.Options{
		ClusterName:       "catalogbot-e2e",
		CreateCluster:     true,
		NodeImage:         l.NodeImage,
		KindConfig:        string(kindConfig),
		Keep:              os.Getenv("CATALOGBOT_SMOKE_KEEP") == "1",
		OLMManifestsDir:   l.OLMManifests,
		CatalogImage:      repo + "@" + l.CatalogDigest,
		CatalogArchive:    l.CatalogArchive,
		ImageArchives:     l.ImageArchives,
		Packages:          []string{l.GoodPackage, l.BrokenPackage},
		Upgrade:           map[string]string{l.GoodPackage: l.GoodFrom},
		Timeout:           6 * time.Minute,
		Parallel:          2,
		CrashLoopRestarts: 2,
		Progress:          os.Stderr,
	})
	t.Logf("smoke.Run took %s", time.Since(start).Round(time.Second))
	out, _ := json.MarshalIndent(res, "", "  ")
	t.Logf("result:\n%s", out)

	if !errors.Is(err, smoke.ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("Run error = %v (category %v); want the broken package to fail and nothing else", err, diag.CategoryOf(err))
	}
	if !res.ClusterCreated || !res.OLMInstalled {
		t.Errorf("clusterCreated=%t olmInstalled=%t, want both", res.ClusterCreated, res.OLMInstalled)
	}
	byName := map[string]smoke.PackageResult{}
	for _, p := range res.Packages {
		byName[p.Package] = p
	}
	good := byName[l.GoodPackage]
	if !good.Succeeded || good.CSV != l.GoodHead || good.Phase != "Succeeded" || good.UpgradedFrom != l.GoodFrom {
		t.Errorf("good operator: succeeded=%t csv=%q phase=%q upgradedFrom=%q; want %s Succeeded, upgraded from %s",
			good.Succeeded, good.CSV, good.Phase, good.UpgradedFrom, l.GoodHead, l.GoodFrom)
	}
	broken := byName[l.BrokenPackage]
	if broken.Succeeded || len(broken.Diagnostics) == 0 {
		t.Fatalf("broken operator: %+v", broken)
	}
	if d := broken.Diagnostics[0]; d.Rule != "crash-loop" {
		t.Errorf("broken operator's lead diagnostic = %s, want rule crash-loop", d)
	}
	var all strings.Builder
	for _, d := range broken.Diagnostics {
		all.WriteString(d.Message + "\n")
	}
	for _, want := range []string{
		"FATAL: SMOKE_CRASH=1: this build crashes on purpose", // the crashing container's own log
		"CSV " + smoke.NamespaceFor(l.BrokenPackage) + "/",    // CSV status
		"events of namespace " + smoke.NamespaceFor(l.BrokenPackage),
		"serving CatalogSource " + smoke.CatalogSourceName, // catalog pod status
	} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("broken operator's diagnostics lack %q", want)
		}
	}
}
