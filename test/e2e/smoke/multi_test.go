//go:build e2e

package smoke

import (
	"context"
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
)

// multiConfig is a template-driven repository's configuration with two cluster versions: catalogs/v4.19
// (OpenShift 4.19, Kubernetes 1.32) and catalogs/v4.20 (4.20, Kubernetes 1.33).
const multiConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
maintainers: [catalog-admin]
catalogs:
  pattern: catalogs/{version}
  image: registry.example.test/index:{version}
smoke:
  enabled: true
  timeout: 5m
publish:
  base: `

// TestMultiCatalogPRInKind runs `catalogbot pr` on a repository with two catalogs, two cluster versions,
// whose pull request changes both: v4.19 holds the csv-metadata catalogs (smoke-good v0.1.0 -> v0.2.0,
// smoke-new added), v4.20 the inline ones (the same change in opm render's default form). The lane has
// one node image (Kubernetes 1.33), so both versions are mapped to it (--smoke-node-images
// 1.32=IMAGE,1.33=IMAGE): what this proves is the stage's sequence in real clusters (one kind cluster per
// catalog, created with the lane's kind config, OLM installed, the base catalog image then the head's,
// the cluster deleted before the next is created, none left), not Kubernetes 1.32. The catalogs differ,
// so they do not share an install.
func TestMultiCatalogPRInKind(t *testing.T) {
	l := loadLane(t)
	requireDocker(t, l.NodeImage)
	requireNoCluster(t)
	sigCtx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(sigCtx, 25*time.Minute)
	defer cancel()
	t.Cleanup(func() { leftClusters(t) })

	var bundles []laneBundle
	readJSON(t, l.Bundles, &bundles)
	archives := slices.Clone(l.ImageArchives)
	for _, b := range bundles {
		if b.Loaded {
			archives = append(archives, b.Archive)
		}
	}
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=lane", "GIT_AUTHOR_EMAIL=lane@example.test",
			"GIT_COMMITTER_NAME=lane", "GIT_COMMITTER_EMAIL=lane@example.test")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// each catalog with the lane's catalog of the packages that pass (the four broken ones stay out)
	put := func(catalogName, laneCatalog string) {
		dir := filepath.Join(repo, "catalogs", catalogName)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		for _, pkg := range []string{good, fresh} {
			if from := filepath.Join(l.Catalogs[laneCatalog].FBC, pkg); exists(from) {
				copyTree(t, from, filepath.Join(dir, pkg))
			}
		}
	}
	writeFile(t, filepath.Join(repo, ".catalogbot.yaml"), multiConfig+serveOPM(t, l.OPMLayout)+"\n")
	put("v4.19", "base")
	put("v4.20", "base-inline")
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("commit", "-qm", "base: smoke-good v0.1.0 in v4.19 and v4.20")
	git("checkout", "-qb", "pr")
	put("v4.19", "head")
	put("v4.20", "head-inline")
	git("add", "-A")
	git("commit", "-qm", "smoke-good v0.2.0, smoke-new in v4.19 and v4.20")

	kindConfig, err := filepath.Abs(filepath.Join("..", "..", "..", "hack", "kind-offline", "kind-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--repo", repo, "--base", "main", "--head", "pr", "--author", "catalog-admin", "--skip-images",
		"--smoke-node-images", "1.32=" + l.NodeImage + ",1.33=" + l.NodeImage,
		"--smoke-kind-config", kindConfig, "--smoke-olm-manifests", l.OLMManifests}
	for _, a := range archives {
		args = append(args, "--smoke-image-archive", a)
	}
	st, code := runPRSmoke(ctx, t, args)
	if st.Status != "pass" || !strings.HasPrefix(st.Summary, "2 catalogs smoke-installed in 2 kind clusters one after the other: 4 of 4 package installs reached CSV Succeeded, 2 of 2 upgraded from the base catalog") {
		t.Errorf("smoke stage: status %s, summary %q, error %q", st.Status, st.Summary, st.Error)
	}
	for _, line := range []string{
		"- catalog v4.19 (Kubernetes 1.32, node image " + l.NodeImage + "): passed, 2 of 2 installed (smoke-good, smoke-new), 1 of 1 upgraded",
		"- catalog v4.20 (Kubernetes 1.33, node image " + l.NodeImage + "): passed, 2 of 2 installed (smoke-good, smoke-new), 1 of 1 upgraded",
	} {
		if !strings.Contains(st.Details, line) {
			t.Errorf("smoke details lack %q:\n%s", line, st.Details)
		}
	}
	if code != 0 {
		t.Errorf("catalogbot pr exited %d; want 0 (every stage passes)", code)
	}
}

// leftClusters fails when the stage left a kind cluster behind (it deletes each before the next).
func leftClusters(t *testing.T) {
	t.Helper()
	names, err := cluster.NewProvider().List()
	if err != nil {
		t.Errorf("listing kind clusters: %v", err)
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, "catalogbot-") && n != clusterE2E {
			t.Errorf("kind cluster %s was left behind", n)
			if err := cluster.NewProvider().Delete(n, os.DevNull); err != nil {
				t.Errorf("deleting it: %v", err)
			}
		}
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
