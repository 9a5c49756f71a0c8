package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

const communityConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalogs:
  pattern: catalogs/{version}
  image: quay.io/example/index:{version}
  migrateLevel: bundle-object-to-csv-metadata
  migrateFrom: v4.17
`

// communityRepo copies the shared data's community-operators packages into a temp dir with a
// multi-catalog configuration.
func communityRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	if out, err := exec.Command("cp", "-r", shareddata.Dir(t, "fbc-templates"), dir).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".catalogbot.yaml"), []byte(communityConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cliErr runs a command line that fails before reporting (a usage error, say) and returns its error.
func cliErr(args ...string) error {
	cmd := newRootCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SetArgs(args)
	return cmd.ExecuteContext(context.Background())
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := newRootCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	var silent errSilentExit
	switch {
	case errors.As(err, &silent):
		code = silent.code
	case err != nil:
		t.Fatalf("%v", err)
	}
	return o.String(), e.String(), code
}

// TestRenderTemplatesCLI renders one package offline, checks drift, breaks a committed render and sees
// the check fail on it, then writes the render back and sees the check pass.
func TestRenderTemplatesCLI(t *testing.T) {
	repo := communityRepo(t)
	base := []string{"render", "--repo", repo, "--offline", "--seed-from", repo, "--template-cache-dir", t.TempDir(), "--package", "dotvirt-operator"}
	out, progress, code := runCLI(t, append(base, "--check")...)
	if code != 0 {
		t.Fatalf("check of an in-sync package failed (%d):\n%s", code, out)
	}
	if n := strings.Count(progress, "render ["); n != 5 {
		t.Errorf("%d progress lines, want one per catalog (5):\n%s", n, progress)
	}
	file := filepath.Join(repo, "catalogs", "v4.19", "dotvirt-operator", "catalog.yaml")
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, bytes.Replace(good, []byte("stable-v0"), []byte("stable-v9"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// The broken file is not the seed: the seed is a separate trusted copy.
	seed := communityRepo(t)
	base[5] = seed
	out, _, code = runCLI(t, append(base, "--check")...)
	if code != 1 || !strings.Contains(out, "catalogs/v4.19/dotvirt-operator/catalog.yaml") || strings.Contains(out, "catalogs/v4.18/dotvirt-operator") {
		t.Fatalf("drift not reported on the broken catalog only (exit %d):\n%s", code, out)
	}
	if _, _, code = runCLI(t, base...); code != 0 {
		t.Fatalf("render failed (%d)", code)
	}
	if fixed, _ := os.ReadFile(file); !bytes.Equal(fixed, good) {
		t.Error("render did not write the committed render back")
	}
	if out, _, code = runCLI(t, append(base, "--check")...); code != 0 {
		t.Errorf("check after render failed:\n%s", out)
	}
}

func TestValidateEveryCatalogCLI(t *testing.T) {
	repo := communityRepo(t)
	out, progress, code := runCLI(t, "validate", repo)
	if code != 0 || strings.Count(progress, "validate [") != 11 || strings.Count(out, "PASS") != 11 {
		t.Errorf("want 11 passing catalogs with a progress line each (exit %d):\n%s\n%s", code, progress, out)
	}
	// One catalog directory is validated alone.
	if out, progress, code = runCLI(t, "validate", filepath.Join(repo, "catalogs", "v4.18")); code != 0 || strings.Contains(progress, "validate [") {
		t.Errorf("validating one catalog directory (exit %d):\n%s", code, out)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	out, progress, code = runCLI(t, "validate")
	if code != 0 || strings.Count(progress, "validate [") != 11 || strings.Count(out, "PASS") != 11 {
		t.Errorf("want 11 passing catalogs with a progress line each (exit %d):\n%s\n%s", code, progress, out)
	}
}

// render --check --offline with no other flag, in a git repository, seeds the bundle cache from HEAD's
// committed catalogs (never the work tree) and says so: an in-sync package passes, and a committed render
// broken in the work tree fails on that file alone, its bundles still coming from HEAD.
func TestRenderOfflineSeedsFromHEAD(t *testing.T) {
	repo := communityRepo(t)
	gitIn(t, repo, "init", "-q", "-b", "main")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "-q", "-m", "base")
	args := []string{"render", "--repo", repo, "--offline", "--check", "--template-cache-dir", t.TempDir(), "--package", "dotvirt-operator"}
	out, _, code := runCLI(t, args...)
	if code != 0 || !strings.Contains(out, "seeded from HEAD (") {
		t.Fatalf("exit %d, want a pass that names HEAD as the seed:\n%s", code, out)
	}
	file := filepath.Join(repo, "catalogs", "v4.19", "dotvirt-operator", "catalog.yaml")
	if err := os.WriteFile(file, []byte("schema: olm.package\nname: dotvirt-operator\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, progress, code := runCLI(t, args...)
	if code != 1 || !strings.Contains(out, "catalogs/v4.19/dotvirt-operator/catalog.yaml") || strings.Contains(out, "template-not-cached") ||
		strings.Contains(out, "catalogs/v4.20/dotvirt-operator") {
		t.Errorf("exit %d, want drift on the broken file only, bundles from HEAD:\n%s", code, out)
	}
	if !strings.Contains(progress, "v4.19: 1 package, 1 DRIFTED") || strings.Count(progress, ", ok") != 4 {
		t.Errorf("the progress lines should say which catalog drifted:\n%s", progress)
	}
}

// The render summary counts what --package selects, the progress line the packages of each catalog, and
// an unknown package is a usage error naming the missing ci.yaml.
func TestRenderPackageCounts(t *testing.T) {
	repo := communityRepo(t)
	base := []string{"render", "--repo", repo, "--offline", "--seed-from", repo, "--template-cache-dir", t.TempDir(), "--check"}
	out, progress, code := runCLI(t, append(base, "--package", "dotvirt-operator")...)
	if code != 0 || !strings.Contains(out, "5 template mappings into 5 catalogs") || !strings.Contains(progress, ": 1 package, ok") {
		t.Errorf("exit %d:\n%s\n%s", code, out, progress)
	}
	cmd := newRootCmd()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(append(base, "--package", "nosuch"))
	err := cmd.ExecuteContext(context.Background())
	if err == nil || !strings.Contains(err.Error(), "operators/nosuch/ci.yaml does not exist") || strings.Contains(err.Error(), "openat") {
		t.Errorf("--package nosuch: %v", err)
	}
}

// A template-driven repository whose .catalogbot.yaml lacks catalogs: is told so, by validate (instead of
// hundreds of errors of the repository root read as one catalog) and by render (instead of "open
// catalog.yaml"), with the command that writes a complete configuration; run as printed, it does, and
// the drift gate then runs.
func TestTemplateLayoutWithoutCatalogsSaysSo(t *testing.T) {
	repo := communityRepo(t)
	if err := os.WriteFile(filepath.Join(repo, ".catalogbot.yaml"), []byte("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate"}, {"render", "--check"}} {
		cmd := newRootCmd()
		var o, e bytes.Buffer
		cmd.SetOut(&o)
		cmd.SetErr(&e)
		cmd.SetArgs(args)
		err := cmd.ExecuteContext(context.Background())
		if err == nil || !strings.Contains(err.Error(), "run catalogbot init --force to write a complete .catalogbot.yaml") || exitCode(&bytes.Buffer{}, err) != 2 {
			t.Errorf("%v: %v\n%s", args, err, o.String())
		}
	}
	if out, _, code := runCLI(t, "init", "--force"); code != 0 || !strings.Contains(out, "migrateFrom: v4.17") {
		t.Fatalf("init --force as the hint says: exit %d\n%s", code, out)
	}
	if out, _, code := runCLI(t, "render", "--check", "--offline", "--seed-from", ".", "--template-cache-dir", t.TempDir(), "--package", "dotvirt-operator"); code != 0 {
		t.Errorf("render --check after init: exit %d\n%s", code, out)
	}
}
