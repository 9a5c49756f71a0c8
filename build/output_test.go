package build

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

func TestParseOutput(t *testing.T) {
	for in, want := range map[string]Output{
		"oci-layout:out/dir":   {Kind: OutputOCILayout, Path: "out/dir"},
		"tarball:/tmp/c.tar":   {Kind: OutputTarball, Path: "/tmp/c.tar"},
		"tarball:C:\\x\\c.tar": {Kind: OutputTarball, Path: "C:\\x\\c.tar"},
	} {
		got, err := ParseOutput(in)
		if err != nil || got != want {
			t.Errorf("ParseOutput(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "oci-layout:", "docker:img", "dir"} {
		if _, err := ParseOutput(in); err == nil || diag.CategoryOf(err) != diag.Usage {
			t.Errorf("ParseOutput(%q): err = %v, want a usage error", in, err)
		}
	}
}

func TestWriteLayoutOfMultiArch(t *testing.T) {
	reg := registrytest.New(t, nil)
	push(t, reg.Host+"/base/opm:v1", baseIndex(t, linuxAMD64, linuxARM64))
	dir, files := fbcDir(t)
	res, err := Image(t.Context(), dir, testOptions(reg.Host+"/base/opm:v1"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "layout")
	o, _ := ParseOutput("oci-layout:" + out)
	ref, _ := name.ParseReference("example.com/catalog:v1")
	if err := o.Write(t.Context(), res, ref); err != nil {
		t.Fatal(err)
	}
	root, err := layout.ImageIndexFromPath(out)
	if err != nil {
		t.Fatal(err)
	}
	im, err := root.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != mustDigest(t, res.Index) ||
		im.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "example.com/catalog:v1" {
		t.Fatalf("index.json %+v: want one entry, the catalog index, named example.com/catalog:v1", im.Manifests)
	}
	idx, err := root.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cim, _ := idx.IndexManifest()
	for _, d := range cim.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		// Base layers were fetched into the layout: every layer is readable offline.
		for _, l := range layers[:len(layers)-1] {
			if _, err := readAll(l); err != nil {
				t.Errorf("%s: base layer not in the layout: %v", d.Platform, err)
			}
		}
		checkConfigsLayer(t, layers[len(layers)-1], files)
	}
	// Writing again replaces the entry instead of adding one.
	if err := WriteLayout(t.Context(), res, out, ""); err != nil {
		t.Fatal(err)
	}
	root, _ = layout.ImageIndexFromPath(out)
	if im, _ := root.IndexManifest(); len(im.Manifests) != 1 {
		t.Errorf("after a second write index.json has %d entries", len(im.Manifests))
	}
}

func TestWriteTarball(t *testing.T) {
	reg := registrytest.New(t, nil)
	push(t, reg.Host+"/base/opm:v1", baseIndex(t, linuxAMD64, linuxARM64))
	dir, files := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1")
	all, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("example.com/catalog:v1")
	file := filepath.Join(t.TempDir(), "catalog.tar")
	if err := WriteTarball(t.Context(), all, tag, file); err == nil || !strings.Contains(err.Error(), "2") || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("tarball of a 2-platform index: err = %v, want a usage error", err)
	}

	opts.Platforms = []v1.Platform{linuxARM64}
	one, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	o, _ := ParseOutput("tarball:" + file)
	if err := o.Write(t.Context(), one, tag); err != nil {
		t.Fatal(err)
	}
	got, err := tarball.ImageFromPath(file, &tag)
	if err != nil {
		t.Fatal(err)
	}
	im, _ := one.Index.IndexManifest()
	want, _ := one.Index.Image(im.Manifests[0].Digest)
	gotCfg, _ := got.ConfigName()
	wantCfg, _ := want.ConfigName()
	if gotCfg != wantCfg {
		t.Errorf("tarball config %s, want %s", gotCfg, wantCfg)
	}
	gotLayers, _ := got.Layers()
	wantLayers, _ := want.Layers()
	if !slices.EqualFunc(gotLayers, wantLayers, func(a, b v1.Layer) bool { return mustDigest(t, a) == mustDigest(t, b) }) {
		t.Error("tarball layers differ from the built image's")
	}
	checkConfigsLayer(t, gotLayers[len(gotLayers)-1], files)
}
