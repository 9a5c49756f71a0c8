package build

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestE2EDistributionCrossRepoMount builds on a base in base/opm of a real distribution registry and
// pushes to catalog/index: every base layer must be mounted across repositories, and only the catalog
// layer and the configs uploaded.
func TestE2EDistributionCrossRepoMount(t *testing.T) {
	reg := startDistribution(t)
	base := baseIndex(t, linuxAMD64, linuxARM64)
	push(t, reg.Host+"/base/opm:v1.73.0", base)
	dir, files := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1.73.0")
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	reg.rec.reset()
	target, _ := name.ParseReference(reg.Host + "/catalog/index:latest")
	d, err := Push(t.Context(), res, target, opts)
	if err != nil {
		t.Fatal(err)
	}

	var wantMounts []string
	baseIM, _ := base.IndexManifest()
	for _, desc := range baseIM.Manifests[:2] {
		img, _ := base.Image(desc.Digest)
		layers, _ := img.Layers()
		for _, l := range layers {
			wantMounts = append(wantMounts, mustDigest(t, l).String())
		}
	}
	var mounted []string
	for _, r := range reg.rec.requests() {
		if r.method == http.MethodPost && r.path == "/v2/catalog/index/blobs/uploads/" && len(r.query["mount"]) == 1 &&
			r.status == http.StatusCreated {
			if from := r.query["from"]; len(from) != 1 || from[0] != "base/opm" {
				t.Errorf("mount from %v, want base/opm", from)
			}
			mounted = append(mounted, r.query["mount"][0])
		}
	}
	slices.Sort(wantMounts)
	slices.Sort(mounted)
	if !slices.Equal(mounted, wantMounts) {
		t.Errorf("mounted %v,\nwant every base layer %v", mounted, wantMounts)
	}
	wantUploads := append([]string{mustDigest(t, res.Layer).String()}, configDigests(t, res)...)
	uploads := reg.rec.blobCommits()
	slices.Sort(wantUploads)
	slices.Sort(uploads)
	if !slices.Equal(uploads, wantUploads) {
		t.Errorf("uploaded %v,\nwant only the catalog layer and configs %v", uploads, wantUploads)
	}

	pulled, err := remote.Index(target)
	if err != nil {
		t.Fatal(err)
	}
	if mustDigest(t, pulled).String() != d.DigestStr() {
		t.Errorf("tag at %s, pushed %s", mustDigest(t, pulled), d)
	}
	im, _ := pulled.IndexManifest()
	if want := []v1.Platform{linuxAMD64, linuxARM64}; len(im.Manifests) != 2 ||
		!im.Manifests[0].Platform.Equals(want[0]) || !im.Manifests[1].Platform.Equals(want[1]) {
		t.Errorf("pulled platforms %v", im.Manifests)
	}
	for i, desc := range im.Manifests {
		img, err := pulled.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		baseImg, _ := base.Image(baseIM.Manifests[i].Digest)
		checkCatalogImage(t, img, baseImg, files, testEpoch)
	}
}
