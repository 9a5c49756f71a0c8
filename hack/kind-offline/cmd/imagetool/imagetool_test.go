//go:build tools

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"

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
	cats := filepath.Join(dir, "catalogs")
	fbc := filepath.Join(cats, catHead)
	if err := testCatalogCmd(context.Background(), []string{"-out", cats, "-images", filepath.Join(dir, "bundles"), "-operator-image", "example.test/op:v1"}); err != nil {
		t.Fatal(err)
	}
	checkTestCatalogs(t, cats)
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
	for _, want := range []string{"bin/opm", "configs/smoke-good/catalog.json", "configs/smoke-broken/catalog.json", "configs/smoke-needsdep/catalog.json"} {
		if !strings.Contains(joined, want) {
			t.Errorf("image lacks %s; has:\n%s", want, joined)
		}
	}
}

// checkTestCatalogs checks the four catalogs: each loads cleanly (and passes opm validate when the
// reference opm is there), every bundle is an image by digest, the csv-metadata catalogs carry no inline
// object and the inline ones no olm.csv.metadata, base holds only the first version of smoke-good, and
// bundles.json matches the images on disk (none for the unpullable bundle, no metadata in the bad one).
func checkTestCatalogs(t *testing.T, cats string) {
	t.Helper()
	wantBundles := map[string]int{catBase: 1, catBaseInline: 1, catHead: 9, catHeadInline: 3}
	for cat, n := range wantBundles {
		dir := filepath.Join(cats, cat)
		res, err := catalog.LoadDir(context.Background(), dir, catalog.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Diagnostics) > 0 {
			t.Fatalf("catalog %s does not load cleanly: %v", cat, res.Diagnostics)
		}
		if got := len(res.Catalog.Bundles); got != n {
			t.Errorf("catalog %s: bundles = %d, want %d", cat, got, n)
		}
		inline := cat == catBaseInline || cat == catHeadInline
		for _, b := range res.Catalog.Bundles {
			if !strings.Contains(b.Image, "@sha256:") {
				t.Errorf("catalog %s: bundle %s image %q is not by digest", cat, b.Name, b.Image)
			}
			var objects, meta int
			for _, p := range b.Properties {
				switch p.Type {
				case catalog.PropertyBundleObject:
					objects++
				case catalog.PropertyCSVMetadata:
					meta++
				}
			}
			if inline && (objects != 2 || meta != 0) || !inline && (objects != 0 || meta != 1) {
				t.Errorf("catalog %s: bundle %s has %d olm.bundle.object and %d olm.csv.metadata properties", cat, b.Name, objects, meta)
			}
			if cat == catBase && b.Name != "smoke-good.v0.1.0" {
				t.Errorf("base catalog holds %s", b.Name)
			}
		}
		if opm := os.Getenv("CATALOGBOT_OPM"); opm != "" {
			if out, err := exec.Command(opm, "validate", dir).CombinedOutput(); err != nil {
				t.Errorf("opm validate %s: %v\n%s", cat, err, out)
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(cats, "bundles.json"))
	if err != nil {
		t.Fatal(err)
	}
	var list []testBundle
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 9 {
		t.Fatalf("bundles.json lists %d bundles, want 9 (smoke-ownns and smoke-hostile included)", len(list))
	}
	for _, b := range list {
		if b.Package == "smoke-unpullable" {
			if b.Loaded || b.Archive != "" {
				t.Errorf("the unpullable bundle has an archive: %+v", b)
			}
			continue
		}
		img, err := readLayoutImage(strings.TrimSuffix(b.Archive, ".tar"))
		if err != nil {
			t.Fatalf("bundle %s: %v", b.Bundle, err)
		}
		d, _ := img.Digest()
		if !strings.HasSuffix(b.Image, "@"+d.String()) {
			t.Errorf("bundle %s: image %s, layout digest %s", b.Bundle, b.Image, d)
		}
		var names []string
		tr := tar.NewReader(mutate.Extract(img))
		for h, err := tr.Next(); err == nil; h, err = tr.Next() {
			names = append(names, h.Name)
		}
		hasMeta := slices.Contains(names, "metadata/annotations.yaml")
		if hasMeta == (b.Package == "smoke-badunpack") {
			t.Errorf("bundle %s: files %v", b.Bundle, names)
		}
	}
}

// The hostile fixture is the attack of issue 33 item 8: a privileged pod running as root with the node's
// / mounted (and HostMarker, which the lane looks for on the node); every other operator's pod meets the
// restricted Pod Security Standard the smoke enforces.
func TestHostileBundleAsksForTheHost(t *testing.T) {
	for _, p := range testPackages {
		csvJSON, _, err := bundleObjects(p, p.versions[0], "", "example.test/op:v1")
		if err != nil {
			t.Fatal(err)
		}
		var csv v1alpha1.ClusterServiceVersion
		if err := json.Unmarshal(csvJSON, &csv); err != nil {
			t.Fatal(err)
		}
		spec := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[0].Spec.Template.Spec
		c := spec.Containers[0]
		privileged := c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged
		hostPaths := map[string]bool{}
		for _, v := range spec.Volumes {
			if v.HostPath != nil {
				hostPaths[v.HostPath.Path] = true
			}
		}
		if p.hostile {
			if !privileged || !hostPaths["/"] || !hostPaths[HostMarker] || spec.SecurityContext.RunAsUser == nil || *spec.SecurityContext.RunAsUser != 0 {
				t.Errorf("%s: pod spec %+v is not the attack", p.name, spec)
			}
			continue
		}
		restricted := !privileged && len(hostPaths) == 0 && spec.SecurityContext != nil && spec.SecurityContext.RunAsNonRoot != nil && *spec.SecurityContext.RunAsNonRoot &&
			spec.SecurityContext.SeccompProfile != nil && c.SecurityContext.AllowPrivilegeEscalation != nil && !*c.SecurityContext.AllowPrivilegeEscalation &&
			c.SecurityContext.Capabilities != nil && slices.Equal(c.SecurityContext.Capabilities.Drop, []corev1.Capability{"ALL"})
		if !restricted {
			t.Errorf("%s: pod spec %+v does not meet the restricted standard", p.name, spec)
		}
	}
}
