//go:build e2e

package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// smokeRepo makes the repository of the lane's pull request: main holds the base-inline catalog, branch pr
// the head-inline one, .catalogbot.yaml enables smoke and builds catalogs on the lane's opm image.
func smokeRepo(t *testing.T, l lane) (repo, base, head string) {
	opmRef := serveOPM(t, l.OPMLayout)
	repo = t.TempDir()
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
	config := `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalog:
  dir: catalog
  format: json
maintainers: [catalog-admin]
owners:
  smoke-good: [alice]
smoke:
  enabled: true
  timeout: 5m
publish:
  base: ` + opmRef + "\n"
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(repo, ".catalogbot.yaml"), config)
	copyTree(t, l.Catalogs["base-inline"].FBC, filepath.Join(repo, "catalog"))
	git("add", "-A")
	git("commit", "-qm", "base: smoke-good v0.1.0")
	git("checkout", "-qb", "pr")
	if err := os.RemoveAll(filepath.Join(repo, "catalog")); err != nil {
		t.Fatal(err)
	}
	copyTree(t, l.Catalogs["head-inline"].FBC, filepath.Join(repo, "catalog"))
	git("add", "-A")
	git("commit", "-qm", "smoke-good v0.2.0, smoke-new")
	return repo, revParse(t, repo, "main"), revParse(t, repo, "pr")
}

// revParse is the commit rev names in repo.
func revParse(t *testing.T, repo, rev string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "rev-parse", rev).Output()
	if err != nil {
		t.Fatalf("git rev-parse %s: %v", rev, err)
	}
	return strings.TrimSpace(string(out))
}

// testPipeline runs `catalogbot pr` with smoke.enabled on a repository whose pull request is the inline
// catalogs' change (smoke-good v0.1.0 -> v0.2.0, smoke-new added), in the lane's cluster: the smoke
// stage picks the changed packages, builds the base and head catalog images on the opm image (served
// from an in-process registry on loopback), loads them by digest (with the bundle images, as
// --smoke-image-archive), installs smoke-good from the base and requires its upgrade, and installs
// smoke-new fresh.
func testPipeline(ctx context.Context, t *testing.T, l lane, archives []string) {
	repo, _, _ := smokeRepo(t, l)
	args := []string{"--repo", repo, "--base", "main", "--head", "pr", "--author", "catalog-admin",
		"--skip-images", "--smoke-kind-cluster", clusterE2E}
	for _, a := range archives {
		args = append(args, "--smoke-image-archive", a)
	}
	st, code := runPRSmoke(ctx, t, args)
	if st.Status != "pass" || !strings.HasPrefix(st.Summary, "2 of 2 changed packages reached CSV Succeeded, 1 of 1 upgraded from the base catalog") {
		t.Errorf("smoke stage: status %s, summary %q, error %q", st.Status, st.Summary, st.Error)
	}
	if code != 0 {
		t.Errorf("catalogbot pr exited %d; want 0 (every stage passes)", code)
	}
}

// prStage is one stage of the report `catalogbot pr -o json` prints.
type prStage struct{ Name, Status, Summary, Details, Error string }

// runPRSmoke builds the full catalogbot, runs `catalogbot pr ARGS -o json` and returns the report's smoke
// stage (the test fails without one) and the exit code.
func runPRSmoke(ctx context.Context, t *testing.T, args []string) (prStage, int) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "catalogbot")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/catalogbot")
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/catalogbot: %v\n%s", err, out)
	}
	args = append(append([]string{"pr"}, args...), "-o", "json")
	t.Logf("running: %s %s", bin, strings.Join(args, " "))
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, args...)
	var stdout bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, os.Stderr
	err := cmd.Run()
	t.Logf("catalogbot pr took %s", time.Since(start).Round(time.Second))
	t.Logf("report:\n%s", stdout.String())
	var exit *exec.ExitError
	code := 0
	if err != nil {
		if !errors.As(err, &exit) {
			t.Fatalf("catalogbot pr: %v", err)
		}
		code = exit.ExitCode()
	}
	var rep struct {
		Stages []prStage `json:"stages"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	for _, st := range rep.Stages {
		if st.Name == "smoke" {
			return st, code
		}
	}
	t.Fatal("the report has no smoke stage")
	return prStage{}, code
}

// serveOPM serves the lane's opm image from an in-process registry on loopback (the catalogs are built
// on it, as publish.base says) and returns its reference.
func serveOPM(t *testing.T, layoutDir string) string {
	t.Helper()
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		t.Fatalf("opm layout %s: %v (%d manifests)", layoutDir, err, len(m.Manifests))
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: registry.New(registry.Logger(log.New(io.Discard, "", 0))), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	ref := ln.Addr().String() + "/smoke/opm:v1"
	r, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(r, img); err != nil {
		t.Fatalf("serving the opm image: %v", err)
	}
	return ref
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
