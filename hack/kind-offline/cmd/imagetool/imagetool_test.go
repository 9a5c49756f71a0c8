//go:build tools

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/catalogbot/catalogbot/catalog"
)

func TestWriteLayerTar(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/true\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeLayerTar(&buf, []string{"/tmp", "/var/lib/etcd:0700"}, []string{bin + ":/usr/local/bin/tool:0755"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[h.Name] = h.Mode
	}
	want := map[string]int64{"tmp/": 0o1777, "var/": 0o755, "var/lib/": 0o755, "var/lib/etcd/": 0o700,
		"usr/": 0o755, "usr/local/": 0o755, "usr/local/bin/": 0o755, "usr/local/bin/tool": 0o755}
	for n, m := range want {
		if got[n] != m {
			t.Errorf("%s: mode %o, want %o (entries %v)", n, got[n], m, got)
		}
	}
	if err := writeLayerTar(io.Discard, nil, []string{"no-dest"}); err == nil {
		t.Error("a file without destination was accepted")
	}
}

// TestCatalogImage builds the test catalog into an image with catalogbot's build package on a scratch
// base, through the in-process registry, and checks the layout holds it with the catalog under /configs.
func TestCatalogImage(t *testing.T) {
	dir := t.TempDir()
	fbc := filepath.Join(dir, "fbc")
	if err := testCatalogCmd([]string{"-out", fbc, "-operator-image", "example.test/op:v1"}); err != nil {
		t.Fatal(err)
	}
	res, err := catalog.LoadDir(context.Background(), fbc, catalog.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) > 0 {
		t.Fatalf("the test catalog does not load cleanly: %v", res.Diagnostics)
	}
	if n := len(res.Catalog.Bundles); n != 3 {
		t.Errorf("bundles = %d, want 3", n)
	}
	if opm := os.Getenv("CATALOGBOT_OPM"); opm != "" {
		if out, err := exec.Command(opm, "validate", fbc).CombinedOutput(); err != nil {
			t.Errorf("opm validate: %v\n%s", err, out)
		}
	}
	bin := filepath.Join(dir, "opm")
	os.WriteFile(bin, []byte("not really opm"), 0o755)
	base := filepath.Join(dir, "base")
	if err := scratchCmd(context.Background(), []string{"-ref", "example.test/opm:v1", "-out", base, "-dir", "/tmp", bin + ":/bin/opm"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(base + ".tar"); err != nil {
		t.Fatalf("layout tar: %v", err)
	}
	out := filepath.Join(dir, "catalog")
	if err := catalogCmd(context.Background(), []string{"-fbc", fbc, "-base-layout", base, "-ref", "example.test/catalog:v1", "-out", out}); err != nil {
		t.Fatal(err)
	}
	img, err := readLayoutImage(out)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	if len(layers) != 2 {
		t.Fatalf("layers = %d, want base + catalog", len(layers))
	}
	var names []string
	tr := tar.NewReader(mutate.Extract(img))
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	joined := strings.Join(names, "\n")
	for _, want := range []string{"bin/opm", "configs/smoke-good/catalog.json", "configs/smoke-broken/catalog.json"} {
		if !strings.Contains(joined, want) {
			t.Errorf("image lacks %s; has:\n%s", want, joined)
		}
	}
}
