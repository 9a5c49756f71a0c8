package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// promoteRepo is a repository at the parent of upstream's 9a66986dc ("Promote operator kepler-operator to
// catalog version 4.22.", render/promote/testdata/upstream) whose .catalogbot.yaml lists v4.21 and v4.22,
// and the files as that commit left them.
func promoteRepo(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	return fixtureRepo(t, filepath.Join("..", "..", "render", "promote", "testdata", "upstream", "9a66986dc"), `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalogs:
  pattern: catalogs/{version}
  versions: [v4.21, v4.22]
  migrateLevel: bundle-object-to-csv-metadata
`)
}

// catalogbot promote writes the ci.yaml and the new catalog as upstream committed them, offline, and
// says which packages a maintainer must review.
func TestPromoteVerbReproducesUpstreamCommit(t *testing.T) {
	root, want := promoteRepo(t)
	seed := t.TempDir()
	if err := os.CopyFS(seed, os.DirFS(root)); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"promote", "--to", "v4.22", "--repo", root, "--offline", "--seed-from", seed, "--template-cache-dir", t.TempDir()}
	if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	for file, w := range want {
		if got, err := os.ReadFile(filepath.Join(root, file)); err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s differs from upstream's commit (%v)", file, err)
		}
	}
	for _, s := range []string{"1 package promoted from v4.21 into v4.22 (1 for a maintainer to review), 0 skipped", "review_needed: kepler-operator"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("report lacks %q:\n%s", s, stdout.String())
		}
	}
}

// A catalog the configuration does not list is refused (exit 2) naming the configuration's line, and a
// package that maps the catalog already is refused on its ci.yaml line (exit 1); nothing is written.
func TestPromoteVerbRefuses(t *testing.T) {
	root, _ := promoteRepo(t)
	ci, before := keplerCI(t, root)
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"promote", "--to", "v4.23", "--repo", root, "--offline"}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), ".catalogbot.yaml:5: catalogs.versions lists v4.21, v4.22, not v4.23: add v4.23 there first") {
		t.Errorf("v4.23: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if err := os.WriteFile(ci, bytes.Replace(before, []byte("        - v4.21\n"), []byte("        - v4.21\n        - v4.22\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	code = run(t.Context(), []string{"promote", "--to", "v4.22", "--package", "kepler-operator", "--repo", root, "--offline"}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "operators/kepler-operator/ci.yaml:11: error: maps v4.22 already (template basic-template.yaml)") ||
		!strings.Contains(stdout.String(), "nothing was written") {
		t.Errorf("kepler-operator mapping v4.22: exit %d\n%s", code, stdout.String())
	}
	if _, err := os.Stat(filepath.Join(root, "catalogs", "v4.22")); err == nil {
		t.Errorf("a refused promotion wrote catalogs/v4.22")
	}
}

// A package whose catalog does not render (offline, nothing seeded: the bundles are not cached) keeps its
// ci.yaml as it was, so no ci.yaml maps a catalog file that was not written.
func TestPromoteVerbWritesNothingUnrendered(t *testing.T) {
	root, _ := promoteRepo(t)
	ci, before := keplerCI(t, root)
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"promote", "--to", "v4.22", "--repo", root, "--offline", "--template-cache-dir", t.TempDir()}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), "1 ci.yaml left as it was: its catalog did not render") {
		t.Errorf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	if after, err := os.ReadFile(ci); err != nil || !bytes.Equal(after, before) {
		t.Errorf("ci.yaml changed though its catalog did not render:\n%s", after)
	}
	if _, err := os.Stat(filepath.Join(root, "catalogs", "v4.22", "kepler-operator", "catalog.yaml")); err == nil {
		t.Errorf("an unrendered catalog was written")
	}
}

// keplerCI is the path and contents of kepler-operator's ci.yaml in root.
func keplerCI(t *testing.T, root string) (string, []byte) {
	t.Helper()
	ci := filepath.Join(root, "operators", "kepler-operator", "ci.yaml")
	data, err := os.ReadFile(ci)
	if err != nil {
		t.Fatal(err)
	}
	return ci, data
}
