package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// chdir makes dir the working directory for the rest of the test.
func chdir(t *testing.T, dir string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
}

// TestFmtHonoursCatalogs: fmt without DIR in a template-driven repository formats its catalogs, not the
// repository root (where .catalogbot.yaml, config.yaml and every ci.yaml would be read as catalog
// files). Of the 11 shared catalogs only the hand-written v4.19/kubebrowser file is not in opm's form.
func TestFmtHonoursCatalogs(t *testing.T) {
	repo := communityGitRepo(t)
	chdir(t, repo)
	out, stderr, code := runCLI(t, "fmt", "--check")
	if code != 1 || strings.TrimSpace(out) != filepath.FromSlash("catalogs/v4.19/kubebrowser/catalog.yaml") {
		t.Errorf("fmt --check: exit %d, want 1 listing only the hand-written file:\n%s%s", code, out, stderr)
	}
	if _, _, code := runCLI(t, "fmt"); code != 0 {
		t.Fatalf("fmt: exit %d", code)
	}
	if out, _, code := runCLI(t, "fmt", "--check"); code != 0 {
		t.Errorf("fmt --check after fmt: exit %d\n%s", code, out)
	}
	if status := git(t, repo, "status", "--porcelain"); strings.TrimSpace(status) != "M catalogs/v4.19/kubebrowser/catalog.yaml" {
		t.Errorf("fmt changed more than the hand-written file:\n%s", status)
	}
}

// TestFmtKeepsPackageDirectory: upstream's catalogs/<catalog>/konflux/ holds package konflux-operator;
// fmt --check does not ask to move it to konflux-operator/, and fmt rewriting the catalog keeps it there.
func TestFmtKeepsPackageDirectory(t *testing.T) {
	repo := shareddata.UpstreamCheckout(t)
	dir := filepath.Join(repo, "catalogs", "v4.20")
	if out, stderr, code := runCLI(t, "fmt", "--check", dir); code != 0 {
		t.Fatalf("fmt --check: exit %d, want 0 (formatted, in its own directory):\n%s%s", code, out, stderr)
	}
	file := filepath.Join(dir, "konflux", "catalog.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(string(data)+"# not opm's form\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _, code := runCLI(t, "fmt", "--check", dir); code != 1 || strings.TrimSpace(out) != "konflux/catalog.yaml" {
		t.Errorf("fmt --check of a changed file: exit %d\n%s", code, out)
	}
	if _, _, code := runCLI(t, "fmt", dir); code != 0 {
		t.Fatalf("fmt: exit %d", code)
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != string(data) {
		t.Errorf("fmt did not write konflux/catalog.yaml back as committed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "konflux-operator")); !os.IsNotExist(err) {
		t.Errorf("fmt made a konflux-operator directory: %v", err)
	}
}
