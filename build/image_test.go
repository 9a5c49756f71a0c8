package build

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// checkCatalogImage asserts config, layers and history of a pulled catalog image built on base.
func checkCatalogImage(t *testing.T, got, base v1.Image, files map[string][]byte, epoch time.Time) {
	t.Helper()
	cfg, err := got.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Config
	if c.Labels[ConfigsLabel] != "/configs" || c.Labels["base.label"] != "kept" {
		t.Errorf("labels %v: want %s=/configs and the base's labels", c.Labels, ConfigsLabel)
	}
	if !slices.Equal(c.Entrypoint, []string{"/bin/opm"}) {
		t.Errorf("entrypoint %q", c.Entrypoint)
	}
	if want := []string{"serve", "/configs", "--cache-dir=/tmp/cache", "--cache-enforce-integrity=false"}; !slices.Equal(c.Cmd, want) {
		t.Errorf("cmd %q, want %q", c.Cmd, want)
	}
	if !cfg.Created.Equal(epoch) {
		t.Errorf("created %s, want %s", cfg.Created.Time, epoch)
	}
	baseLayers, err := base.Layers()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := got.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != len(baseLayers)+1 {
		t.Fatalf("%d layers, want the base's %d plus one", len(layers), len(baseLayers))
	}
	for i, bl := range baseLayers {
		if mustDigest(t, layers[i]) != mustDigest(t, bl) {
			t.Errorf("layer %d is not the base's", i)
		}
	}
	baseMT, _ := base.MediaType()
	last := layers[len(layers)-1]
	wantLMT := types.DockerLayer
	if baseMT == types.OCIManifestSchema1 {
		wantLMT = types.OCILayer
	}
	if mt, _ := last.MediaType(); mt != wantLMT {
		t.Errorf("catalog layer media type %s, want %s", mt, wantLMT)
	}
	checkConfigsLayer(t, last, files)
	if len(cfg.History) != len(layers) {
		t.Errorf("%d history entries for %d layers", len(cfg.History), len(layers))
	}
}

func TestImageOnMultiArchBase(t *testing.T) {
	reg := registrytest.New(t, nil)
	base := baseIndex(t, linuxAMD64, linuxARM64, linuxPPC)
	push(t, reg.Host+"/base/opm:v1", base)
	dir, files := fbcDir(t)
	epoch := time.Unix(1700000000, 0).UTC()
	opts := testOptions(reg.Host + "/base/opm:v1")
	opts.Epoch = epoch

	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Index == nil || res.Image != nil {
		t.Fatalf("result %+v: want an index", res)
	}
	if want := []v1.Platform{linuxAMD64, linuxARM64, linuxPPC}; !slices.EqualFunc(res.Platforms, want, v1.Platform.Equals) {
		t.Errorf("platforms %v, want %v (attestation dropped, order kept)", res.Platforms, want)
	}
	target, _ := name.ParseReference(reg.Host + "/catalog/index:v1")
	d, err := Push(t.Context(), res, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.DigestStr() != mustDigest(t, res.Index).String() {
		t.Errorf("pushed as %s, built %s", d, mustDigest(t, res.Index))
	}
	pulled, err := remote.Index(target)
	if err != nil {
		t.Fatal(err)
	}
	if mustDigest(t, pulled) != mustDigest(t, res.Index) {
		t.Errorf("tag points at %s, want %s", mustDigest(t, pulled), mustDigest(t, res.Index))
	}
	if mt, _ := pulled.MediaType(); mt != types.OCIImageIndex {
		t.Errorf("index media type %s, want the base's %s", mt, types.OCIImageIndex)
	}
	im, err := pulled.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	baseIM, _ := base.IndexManifest()
	if len(im.Manifests) != 3 {
		t.Fatalf("%d manifests, want 3", len(im.Manifests))
	}
	for i, desc := range im.Manifests {
		if desc.Platform == nil || !desc.Platform.Equals(*baseIM.Manifests[i].Platform) {
			t.Errorf("manifest %d platform %v, want %v", i, desc.Platform, baseIM.Manifests[i].Platform)
		}
		img, err := pulled.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		baseImg, _ := base.Image(baseIM.Manifests[i].Digest)
		checkCatalogImage(t, img, baseImg, files, epoch)
		cfg, _ := img.ConfigFile()
		if cfg.Architecture != desc.Platform.Architecture {
			t.Errorf("manifest %d: config architecture %s under platform %s", i, cfg.Architecture, desc.Platform)
		}
	}
}

func TestImageOnSingleArchBase(t *testing.T) {
	reg := registrytest.New(t, nil)
	base := baseImage(t, linuxAMD64, false, 7)
	push(t, reg.Host+"/base/opm:single", base)
	dir, files := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:single")
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Image == nil || res.Index != nil {
		t.Fatalf("result %+v: want a single image", res)
	}
	target, _ := name.ParseReference(reg.Host + "/catalog/single:latest")
	if _, err := Push(t.Context(), res, target, opts); err != nil {
		t.Fatal(err)
	}
	pulled, err := remote.Image(target)
	if err != nil {
		t.Fatal(err)
	}
	if mt, _ := pulled.MediaType(); mt != types.DockerManifestSchema2 {
		t.Errorf("manifest media type %s, want the base's", mt)
	}
	checkCatalogImage(t, pulled, base, files, testEpoch)

	opts.Platforms = []v1.Platform{linuxARM64}
	_, err = Image(t.Context(), dir, opts)
	if err == nil || !strings.Contains(err.Error(), "linux/arm64/v8") || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("err = %v, want a usage error naming linux/arm64/v8", err)
	}
}

func TestImagePlatformSelection(t *testing.T) {
	reg := registrytest.New(t, nil)
	push(t, reg.Host+"/base/opm:v1", baseIndex(t, linuxAMD64, linuxARM64, linuxPPC))
	dir, _ := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1")

	opts.Platforms, _ = ParsePlatforms([]string{"linux/ppc64le", "linux/arm64"})
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []v1.Platform{linuxARM64, linuxPPC}; !slices.EqualFunc(res.Platforms, want, v1.Platform.Equals) {
		t.Errorf("platforms %v, want %v in the base's order", res.Platforms, want)
	}
	im, _ := res.Index.IndexManifest()
	if len(im.Manifests) != 2 {
		t.Errorf("%d manifests, want 2", len(im.Manifests))
	}

	opts.Platforms, _ = ParsePlatforms([]string{"linux/amd64", "linux/s390x"})
	_, err = Image(t.Context(), dir, opts)
	if err == nil || !strings.Contains(err.Error(), "linux/s390x") || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("err = %v, want a usage error naming linux/s390x", err)
	}
	if !strings.Contains(err.Error(), "linux/amd64, linux/arm64/v8, linux/ppc64le") {
		t.Errorf("error %q does not list the base's platforms", err)
	}
}

func TestImageIsReproducible(t *testing.T) {
	reg := registrytest.New(t, nil)
	push(t, reg.Host+"/base/opm:v1", baseIndex(t, linuxAMD64, linuxARM64))
	opts := testOptions(reg.Host + "/base/opm:v1")
	digest := func(dir string, opts Options) v1.Hash {
		t.Helper()
		res, err := Image(t.Context(), dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		return mustDigest(t, res.Index)
	}
	dirA, _ := fbcDir(t)
	dirB, files := fbcDir(t)
	first := digest(dirA, opts)
	if second := digest(dirB, opts); second != first {
		t.Errorf("same catalog in another directory built %s, then %s", first, second)
	}
	fromEnv := opts
	fromEnv.Epoch = time.Time{}
	t.Setenv("SOURCE_DATE_EPOCH", "0")
	unix := digest(dirA, fromEnv)
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	if d := digest(dirA, fromEnv); d == unix || d == first {
		t.Error("SOURCE_DATE_EPOCH did not change the image")
	}
	t.Setenv("SOURCE_DATE_EPOCH", strconv.FormatInt(testEpoch.Unix(), 10))
	if d := digest(dirA, fromEnv); d != first {
		t.Errorf("SOURCE_DATE_EPOCH=%d built %s, Options.Epoch of the same time built %s", testEpoch.Unix(), d, first)
	}
	b := files["kube-green/catalog.yaml"]
	i := len(b) / 2
	b[i] ^= 0x20
	overwriteFile(t, dirB, "kube-green/catalog.yaml", b)
	if d := digest(dirB, opts); d == first {
		t.Error("changing one byte of the catalog did not change the image")
	}
}

func TestImageBaseErrors(t *testing.T) {
	reg := registrytest.New(t, nil)
	dir, _ := fbcDir(t)
	_, err := Image(t.Context(), dir, testOptions(reg.Host+"/base/missing:v1"))
	if err == nil || !strings.Contains(err.Error(), "base/missing:v1") || diag.CategoryOf(err) != diag.Infra {
		t.Errorf("missing base: err = %v, want an infrastructure error naming the base", err)
	}
	_, err = Image(t.Context(), dir, testOptions("UPPER/case:::"))
	if err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("bad base reference: err = %v, want a usage error", err)
	}
	_, err = Image(t.Context(), dir+"-missing", testOptions(reg.Host+"/base/missing:v1"))
	if err == nil || errors.Is(err, ErrSymlink) || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("missing catalog dir: err = %v, want a usage error", err)
	}
}
