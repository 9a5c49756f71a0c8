package build

import (
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// configDigests are the config blob digests of every image of res.
func configDigests(t *testing.T, res Result) []string {
	t.Helper()
	if res.Index == nil {
		h, err := res.Image.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		return []string{h.String()}
	}
	im, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range im.Manifests {
		img, err := res.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		h, err := img.ConfigName()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, h.String())
	}
	return out
}

func TestPushUploadsOnlyTheCatalogLayerAndConfigs(t *testing.T) {
	rec := &recorder{}
	reg := registrytest.New(t, rec.wrap)
	push(t, reg.Host+"/base/opm:v1", baseIndex(t, linuxAMD64, linuxARM64, linuxPPC))
	dir, _ := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1")
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	rec.reset()
	target, _ := name.ParseReference(reg.Host + "/catalog/index:v1")
	if _, err := Push(t.Context(), res, target, opts); err != nil {
		t.Fatal(err)
	}
	want := append([]string{mustDigest(t, res.Layer).String()}, configDigests(t, res)...)
	got := rec.blobCommits()
	slices.Sort(want)
	slices.Sort(got)
	// One catalog layer (the same blob on every platform, uploaded once) and one config per platform.
	if !slices.Equal(got, want) {
		t.Errorf("uploaded blobs %v,\nwant only the catalog layer and the %d configs %v", got, len(res.Platforms), want)
	}
	for _, r := range rec.requests() {
		if r.method == http.MethodPatch && !strings.HasPrefix(r.path, "/v2/catalog/index/") {
			t.Errorf("upload outside the target repository: %s %s", r.method, r.path)
		}
	}

	// Pushing the same build again uploads nothing.
	rec.reset()
	if _, err := Push(t.Context(), res, target, opts); err != nil {
		t.Fatal(err)
	}
	if got := rec.blobCommits(); len(got) != 0 {
		t.Errorf("second push uploaded %v", got)
	}
}

func TestPushMovesTheTagLast(t *testing.T) {
	rec := &recorder{}
	reg := registrytest.New(t, rec.wrap)
	push(t, reg.Host+"/base/opm:v1", baseIndex(t, linuxAMD64, linuxARM64))
	old := baseImage(t, linuxAMD64, false, 42)
	push(t, reg.Host+"/catalog/index:v1", old)
	dir, _ := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1")
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var tagPuts atomic.Int32
	rec.setFail(func(r *http.Request) int {
		if r.Method == http.MethodPut && r.URL.Path == "/v2/catalog/index/manifests/v1" {
			tagPuts.Add(1)
			return http.StatusInternalServerError
		}
		return 0
	})
	rec.reset()
	target, _ := name.ParseReference(reg.Host + "/catalog/index:v1")
	_, err = Push(t.Context(), res, target, opts)
	if err == nil || !strings.Contains(err.Error(), "catalog/index:v1") || diag.CategoryOf(err) != diag.Infra {
		t.Fatalf("err = %v, want an infrastructure error naming the tag", err)
	}
	if n := tagPuts.Load(); n != int32(fastRetry.Steps) {
		t.Errorf("tag PUT tried %d times, want %d (retried on 500)", n, fastRetry.Steps)
	}
	rec.setFail(nil)
	head, err := remote.Head(target)
	if err != nil {
		t.Fatal(err)
	}
	if head.Digest != mustDigest(t, old) {
		t.Errorf("after the failed push the tag points at %s, want the old %s", head.Digest, mustDigest(t, old))
	}
	byDigest := target.Context().Digest(mustDigest(t, res.Index).String())
	if _, err := remote.Index(byDigest); err != nil {
		t.Errorf("the new index is not readable by digest: %v", err)
	}
	// Every manifest PUT by digest came before the first tag PUT.
	reqs := rec.requests()
	firstTag := slices.IndexFunc(reqs, func(r request) bool { return r.method == http.MethodPut && strings.HasSuffix(r.path, "/manifests/v1") })
	if firstTag < 0 {
		t.Fatal("no tag PUT recorded")
	}
	digestPuts := 0
	for i, r := range reqs {
		if r.method == http.MethodPut && strings.Contains(r.path, "/manifests/sha256:") {
			digestPuts++
			if i > firstTag {
				t.Errorf("manifest %s written after the tag PUT", r.path)
			}
		}
	}
	if digestPuts != 3 { // two platform images and the index
		t.Errorf("%d manifest PUTs by digest, want 3", digestPuts)
	}
}

func TestPushRetriesRateLimits(t *testing.T) {
	rec := &recorder{}
	reg := registrytest.New(t, rec.wrap)
	push(t, reg.Host+"/base/opm:v1", baseImage(t, linuxAMD64, true, 3))
	dir, _ := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1")
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var limited atomic.Int32
	rec.setFail(func(r *http.Request) int {
		if r.Method == http.MethodPost && limited.Load() < 2 {
			limited.Add(1)
			return http.StatusTooManyRequests
		}
		return 0
	})
	target, _ := name.ParseReference(reg.Host + "/catalog/index:v2")
	d, err := Push(t.Context(), res, target, opts)
	if err != nil {
		t.Fatalf("push through two 429 answers: %v", err)
	}
	if limited.Load() != 2 {
		t.Errorf("%d rate-limited requests, want 2", limited.Load())
	}
	if h, err := remote.Head(target); err != nil || h.Digest.String() != d.DigestStr() {
		t.Errorf("tag %s: %v, %v; want %s", target, h, err, d)
	}
}

func TestPushToDigestReference(t *testing.T) {
	reg := registrytest.New(t, nil)
	push(t, reg.Host+"/base/opm:v1", baseImage(t, linuxAMD64, false, 4))
	dir, _ := fbcDir(t)
	opts := testOptions(reg.Host + "/base/opm:v1")
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	h := mustDigest(t, res.Image)
	good, _ := name.NewDigest(reg.Host + "/catalog/pinned@" + h.String())
	if d, err := Push(t.Context(), res, good, opts); err != nil || d != good {
		t.Errorf("Push(%s) = %v, %v", good, d, err)
	}
	other := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("0", 64)}
	bad, _ := name.NewDigest(reg.Host + "/catalog/pinned@" + other.String())
	if _, err := Push(t.Context(), res, bad, opts); err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Errorf("Push to a different digest: err = %v, want a usage error", err)
	}
}
