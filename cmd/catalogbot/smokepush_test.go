package main

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// smokeWithFake runs smoke with a fake install that records the options of each OLM's run.
func smokeWithFake(t *testing.T, so *smokeOptions) (map[string]smoke.Options, error) {
	t.Helper()
	got := map[string]smoke.Options{}
	so.io = streams{out: &bytes.Buffer{}, err: &bytes.Buffer{}}
	so.out = outputFlags{format: "text"}
	so.run = func(_ context.Context, o smoke.Options) (smoke.Result, error) {
		got[o.OLM] = o
		return smoke.Result{OLM: o.OLM}, nil
	}
	return got, runSmoke(t.Context(), so)
}

func randomImage(t *testing.T) (v1.Image, v1.Hash) {
	t.Helper()
	img, err := random.Image(512, 2)
	if err != nil {
		t.Fatal(err)
	}
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return img, h
}

// smoke --olm v1 --registry PREFIX pushes the --catalog-archive by digest to PREFIX/catalog and installs
// from there (catalogd pulls it itself); with --olm both, OLM v0 still loads the archive into the nodes.
func TestSmokeRegistryPushesTheArchiveForOLMv1(t *testing.T) {
	reg := registrytest.New(t, nil)
	img, h := randomImage(t)
	dir := t.TempDir()
	layoutTar := filepath.Join(dir, "catalog.tar")
	if err := build.WriteLayoutArchive(t.Context(), build.Result{Image: img}, layoutTar, "catalogbot.local/smoke/catalog:head"); err != nil {
		t.Fatal(err)
	}
	dockerTar := filepath.Join(dir, "docker.tar")
	if err := tarball.WriteToFile(dockerTar, name.MustParseReference("catalogbot.local/smoke/catalog:head"), img); err != nil {
		t.Fatal(err)
	}
	prefix := reg.Host + "/x"
	want := prefix + "/catalog@" + h.String()

	for _, archive := range []string{layoutTar, dockerTar} {
		got, err := smokeWithFake(t, &smokeOptions{registry: prefix,
			smoke: smoke.Options{CatalogArchive: archive, Packages: []string{"a"}, OLM: smoke.OLMv1}})
		if err != nil || got[smoke.OLMv1].CatalogImage != want || got[smoke.OLMv1].CatalogArchive != "" {
			t.Fatalf("%s: err %v, v1 run %+v, want image %s and no archive", filepath.Base(archive), err, got[smoke.OLMv1], want)
		}
		ref, err := name.ParseReference(want)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := remote.Get(ref); err != nil {
			t.Fatalf("%s: the pushed catalog is not in the registry: %v", filepath.Base(archive), err)
		}
	}

	// both: v0 keeps the given image and the archive, v1 installs from the registry
	local := "catalogbot.local/smoke/catalog@" + h.String()
	got, err := smokeWithFake(t, &smokeOptions{registry: prefix,
		smoke: smoke.Options{CatalogImage: local, CatalogArchive: layoutTar, ClusterName: "kind", Packages: []string{"a"}, OLM: "both"}})
	if err != nil || got[smoke.OLMv0].CatalogImage != local || got[smoke.OLMv0].CatalogArchive != layoutTar || got[smoke.OLMv1].CatalogImage != want {
		t.Fatalf("both: err %v, runs %+v", err, got)
	}
}

// What smoke refuses before any cluster is touched: an archive OLM v1 cannot see, --registry without an
// archive or an OLM v1 run, a prefix that is no repository, an archive that is not the --catalog-image,
// and archives that try to leave their directory or hold several images.
func TestSmokeRegistryUsageErrors(t *testing.T) {
	reg := registrytest.New(t, nil)
	img, _ := randomImage(t)
	dir := t.TempDir()
	archive := filepath.Join(dir, "catalog.tar")
	if err := build.WriteLayoutArchive(t.Context(), build.Result{Image: img}, archive, "c:head"); err != nil {
		t.Fatal(err)
	}
	escape := filepath.Join(dir, "escape.tar")
	writeTar(t, escape, map[string]string{"oci-layout": `{"imageLayoutVersion":"1.0.0"}`, "index.json": `{}`, "../outside": "x"})
	twoImages := filepath.Join(dir, "two")
	lp, err := layout.Write(twoImages, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		i, _ := randomImage(t)
		if err := lp.AppendImage(i); err != nil {
			t.Fatal(err)
		}
	}
	other := "catalogbot.local/c@sha256:" + strings.Repeat("0", 64)
	for _, c := range []struct {
		name     string
		registry string
		o        smoke.Options
		want     string
	}{
		{"archive without registry", "", smoke.Options{CatalogImage: other, CatalogArchive: archive, Packages: []string{"a"}, OLM: "both"}, "give --registry PREFIX"},
		{"registry for OLM v0", reg.Host + "/x", smoke.Options{CatalogImage: other, CatalogArchive: archive, Packages: []string{"a"}}, "is for OLM v1"},
		{"registry without archive", reg.Host + "/x", smoke.Options{Packages: []string{"a"}, OLM: smoke.OLMv1}, "give it"},
		{"prefix with a digest", reg.Host + "/x@sha256:00", smoke.Options{CatalogArchive: archive, Packages: []string{"a"}, OLM: smoke.OLMv1}, "not a repository prefix"},
		{"archive is not the catalog image", reg.Host + "/x", smoke.Options{CatalogImage: other, CatalogArchive: archive, Packages: []string{"a"}, OLM: smoke.OLMv1}, "not --catalog-image"},
		{"entry leaving the archive", reg.Host + "/x", smoke.Options{CatalogArchive: escape, Packages: []string{"a"}, OLM: smoke.OLMv1}, `"../outside" leaves the archive`},
		{"two images", reg.Host + "/x", smoke.Options{CatalogArchive: twoImages, Packages: []string{"a"}, OLM: smoke.OLMv1}, "holds 2 images"},
		{"missing archive", reg.Host + "/x", smoke.Options{CatalogArchive: filepath.Join(dir, "none.tar"), Packages: []string{"a"}, OLM: smoke.OLMv1}, "none.tar"},
	} {
		got, err := smokeWithFake(t, &smokeOptions{registry: c.registry, smoke: c.o})
		if err == nil || !strings.Contains(err.Error(), c.want) || diag.CategoryOf(err) != diag.Usage || len(got) > 0 {
			t.Errorf("%s: err %v (want a usage error with %q), runs %v", c.name, err, c.want, got)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "outside")); err == nil {
		t.Error("an archive entry was written outside its directory")
	}
}

func writeTar(t *testing.T, file string, entries map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"oci-layout", "index.json", "../outside"} {
		if body, ok := entries[n]; ok {
			if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
				t.Fatal(err)
			}
			tw.Write([]byte(body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
