package build

import (
	"archive/tar"
	"errors"
	"io"
	"math/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// fastRetry keeps retried requests quick in tests; 3 attempts.
var fastRetry = remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}

// testEpoch is the build time of tests, independent of $SOURCE_DATE_EPOCH.
var testEpoch = time.Unix(1600000000, 0).UTC()

// testOptions are the build options of a test: fast retries and testEpoch.
func testOptions(base string) Options {
	return Options{Base: base, Retry: fastRetry, Epoch: testEpoch}
}

// tool returns the path in env var, skipping (or failing under CATALOGBOT_REQUIRE_TOOLS=1) when unset.
func tool(t *testing.T, env string) string {
	t.Helper()
	return reftools.Path(t, env)
}

// baseImage is a tiny base image for platform p: two deterministic layers, an opm-like config with a label
// and history, in the OCI or Docker flavour.
func baseImage(t *testing.T, p v1.Platform, oci bool, seed int64) v1.Image {
	t.Helper()
	img, lmt := empty.Image, types.DockerLayer
	if oci {
		img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), types.OCIConfigJSON)
		lmt = types.OCILayer
	}
	var adds []mutate.Addendum
	for i := range int64(2) {
		l, err := random.Layer(512, lmt, random.WithSource(rand.NewSource(seed*10+i)))
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.Addendum{Layer: l, History: v1.History{CreatedBy: "base layer"}})
	}
	img, err := mutate.Append(img, adds...)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture, cfg.Variant = p.OS, p.Architecture, p.Variant
	cfg.Config.Entrypoint = []string{"/bin/opm"}
	cfg.Config.Cmd = []string{"registry", "serve"}
	cfg.Config.Labels = map[string]string{"base.label": "kept"}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// baseIndex is a multi-arch OCI base: one image per platform plus an attestation manifest to be dropped.
func baseIndex(t *testing.T, platforms ...v1.Platform) v1.ImageIndex {
	t.Helper()
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	var adds []mutate.IndexAddendum
	for i, p := range platforms {
		p := p
		adds = append(adds, mutate.IndexAddendum{Add: baseImage(t, p, true, int64(i+1)), Descriptor: v1.Descriptor{Platform: &p}})
	}
	att := baseImage(t, v1.Platform{OS: "unknown", Architecture: "unknown"}, true, 99)
	adds = append(adds, mutate.IndexAddendum{Add: att, Descriptor: v1.Descriptor{
		Platform:    &v1.Platform{OS: "unknown", Architecture: "unknown"},
		Annotations: map[string]string{"vnd.docker.reference.type": "attestation-manifest"},
	}})
	return mutate.AppendManifests(idx, adds...)
}

func push(t *testing.T, ref string, t2 remote.Taggable) {
	t.Helper()
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	switch v := t2.(type) {
	case v1.ImageIndex:
		err = remote.WriteIndex(r, v)
	case v1.Image:
		err = remote.Write(r, v)
	}
	if err != nil {
		t.Fatalf("seed %s: %v", ref, err)
	}
}

var (
	linuxAMD64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	linuxARM64 = v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	linuxPPC   = v1.Platform{OS: "linux", Architecture: "ppc64le"}
)

// fbcDir copies a real catalog (kube-green from community-operators-prod) into a temp dir with a nested
// layout and returns the dir and the files it holds, by slash path.
func fbcDir(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	src, err := os.ReadFile(shareddata.Dir(t, "catalogs", "community-operators-prod-v4.16", "kube-green", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"kube-green/catalog.yaml": src,
		"README.txt":              []byte("not part of the catalog\n"),
	}
	dir := filepath.Join(t.TempDir(), "configs")
	for rel, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, files
}

// tarEntry is one entry of a layer, read back.
type tarEntry struct {
	hdr  *tar.Header
	body []byte
}

func readLayer(t *testing.T, l v1.Layer) []tarEntry {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []tarEntry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{hdr: h, body: b})
	}
}

// checkConfigsLayer asserts that the layer holds exactly want under configs/.
func checkConfigsLayer(t *testing.T, l v1.Layer, want map[string][]byte) {
	t.Helper()
	got := map[string][]byte{}
	for _, e := range readLayer(t, l) {
		if e.hdr.Typeflag == tar.TypeReg {
			got[strings.TrimPrefix(e.hdr.Name, "configs/")] = e.body
		}
	}
	if len(got) != len(want) {
		t.Errorf("layer holds %d files, want %d", len(got), len(want))
	}
	for rel, b := range want {
		if string(got[rel]) != string(b) {
			t.Errorf("configs/%s in layer: %d bytes, differs from the source (%d bytes)", rel, len(got[rel]), len(b))
		}
	}
}

// request is one request seen by a recorder.
type request struct {
	method, path string
	query        map[string][]string
	status       int
}

// recorder wraps a registry handler, records requests and can fail some with a status.
type recorder struct {
	mu   sync.Mutex
	reqs []request
	// fail, when it returns a non-zero status, answers the request with it instead of the registry.
	fail func(r *http.Request) int
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		fail := rec.fail
		rec.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		code := 0
		if fail != nil {
			code = fail(r)
		}
		if code != 0 {
			sw.WriteHeader(code)
		} else {
			h.ServeHTTP(sw, r)
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, request{method: r.Method, path: r.URL.Path, query: r.URL.Query(), status: sw.status})
		rec.mu.Unlock()
	})
}

// setFail replaces the failure injector (nil injects nothing).
func (rec *recorder) setFail(fail func(r *http.Request) int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.fail = fail
}

func (rec *recorder) reset() {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.reqs = nil
}

func (rec *recorder) requests() []request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]request(nil), rec.reqs...)
}

// blobCommits are the digests of completed blob uploads (PUT .../blobs/uploads/...?digest=).
func (rec *recorder) blobCommits() []string {
	var out []string
	for _, r := range rec.requests() {
		if r.method == http.MethodPut && strings.Contains(r.path, "/blobs/uploads/") && r.status < 300 {
			out = append(out, r.query["digest"][0])
		}
	}
	return out
}

func mustDigest(t *testing.T, d interface{ Digest() (v1.Hash, error) }) v1.Hash {
	t.Helper()
	h, err := d.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// overwriteFile overwrites one file of dir.
func overwriteFile(t *testing.T, dir, rel string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(rel)), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// readAll reads a layer's compressed blob fully.
func readAll(l v1.Layer) ([]byte, error) {
	rc, err := l.Compressed()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}
