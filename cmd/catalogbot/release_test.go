package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/filetree"
)

// releaseRepo is a repository at the parent of upstream's b212bb168 ("Add openstack-lightspeed-operator
// 0.0.2 to FBC", render/release/testdata/render) with a .catalogbot.yaml, and the catalogs as that commit
// left them.
func releaseRepo(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	return fixtureRepo(t, filepath.Join("..", "..", "render", "release", "testdata", "render", "b212bb168"), `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalogs:
  pattern: catalogs/{version}
  migrateLevel: bundle-object-to-csv-metadata
  migrateFrom: v4.17
release:
  bundleImage: quay.io/community-operator-pipeline-prod/{package}:{version}
`)
}

// fixtureRepo is a copy of an upstream commit's fixture (its before/ directory) with cfg as its
// .catalogbot.yaml, and the files of its after/ directory: what the commit left.
func fixtureRepo(t *testing.T, fixture, cfg string) (string, map[string][]byte) {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join(fixture, "before"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".catalogbot.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := filetree.Read(filepath.Join(fixture, "after"))
	if err != nil {
		t.Fatal(err)
	}
	return root, want
}

// catalogbot release edits the templates and renders the catalogs as upstream committed them, offline.
func TestReleaseVerbRendersUpstreamCommit(t *testing.T) {
	root, want := releaseRepo(t)
	seed := t.TempDir()
	if err := os.CopyFS(seed, os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"release", "operators/openstack-lightspeed-operator/0.0.2", "--repo", root, "--offline", "--seed-from", seed, "--template-cache-dir", t.TempDir()}
	if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for file, w := range want {
		if got, err := os.ReadFile(filepath.Join(root, file)); err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s differs from upstream's commit (%v)", file, err)
		}
	}
	tpl, err := os.ReadFile(filepath.Join(root, "operators/openstack-lightspeed-operator/catalog-templates/v4.16.yaml"))
	if err != nil || !strings.Contains(string(tpl), "  - name: openstack-lightspeed-operator.v0.0.2\n    replaces: openstack-lightspeed-operator.v0.0.1\n") {
		t.Errorf("v4.16.yaml has no channel entry for 0.0.2:\n%s", tpl)
	}
	if !strings.Contains(stdout.String(), "openstack-lightspeed-operator.v0.0.2 (0.0.2) added to 2 templates") {
		t.Errorf("report:\n%s", stdout.String())
	}
}

// A release-config.yaml whose replaces names no bundle of the template is refused with its file and line,
// and nothing is written; --templates-only renders nothing.
func TestReleaseVerbRefusesAndWritesNothing(t *testing.T) {
	root, _ := releaseRepo(t)
	rc := filepath.Join(root, "operators/openstack-lightspeed-operator/0.0.2/release-config.yaml")
	data, err := os.ReadFile(rc)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), "replaces: openstack-lightspeed-operator.v0.0.1", "replaces: openstack-lightspeed-operator.v0.0.0", 1)
	if bad == string(data) {
		t.Fatalf("release-config.yaml has no replaces to change:\n%s", data)
	}
	if err := os.WriteFile(rc, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := filetree.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"release", "operators/openstack-lightspeed-operator/0.0.2", "--repo", root, "--templates-only"}, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "operators/openstack-lightspeed-operator/0.0.2/release-config.yaml:") ||
		!strings.Contains(stdout.String(), `no channel has "openstack-lightspeed-operator.v0.0.0"`) {
		t.Errorf("report does not name the line:\n%s", stdout.String())
	}
	after, err := filetree.Read(root)
	if err != nil {
		t.Fatal(err)
	}
	if d := filetree.Diff(before, after); len(d) > 0 {
		t.Errorf("a refused release wrote %v", d)
	}
}
