package render

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// fastRetry keeps retry tests quick: three tries, 1 ms apart.
var fastRetry = remote.WithRetryBackoff(remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3})

// testRegistry is an in-process registry with a request counter and a fault injector in front.
type testRegistry struct {
	*registrytest.Registry
	requests atomic.Int64

	mu     sync.Mutex
	faults int // requests still to fail; -1 fails all
	code   int
	match  func(*http.Request) bool
	// observe, when set, sees every request (set it before the requests it should see).
	observe func(*http.Request)
	// truncate makes blob downloads send only the first half of the blob, without a Content-Length.
	truncate bool
}

// bundleImage is the bundle image of the bundle directory dir, as release --push builds it.
func bundleImage(t testing.TB, dir string) v1.Image {
	t.Helper()
	img, err := bundleimage.Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func newTestRegistry(t testing.TB) *testRegistry {
	t.Helper()
	tr := &testRegistry{}
	tr.Registry = registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tr.requests.Add(1)
			tr.mu.Lock()
			observe := tr.observe
			tr.mu.Unlock()
			if observe != nil {
				observe(r)
			}
			if tr.truncating() && r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				for k, v := range rec.Header() {
					if k != "Content-Length" {
						w.Header()[k] = v
					}
				}
				w.WriteHeader(rec.Code)
				body := rec.Body.Bytes()
				_, _ = w.Write(body[:len(body)/2])
				return
			}
			if tr.fail(r) {
				w.WriteHeader(tr.code)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	return tr
}

// failNext makes the next n requests that match answer code (n = -1: all of them).
func (tr *testRegistry) failNext(n, code int, match func(*http.Request) bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.faults, tr.code, tr.match = n, code, match
}

func (tr *testRegistry) truncating() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.truncate
}

// pending is the number of faults not yet served.
func (tr *testRegistry) pending() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.faults
}

func (tr *testRegistry) fail(r *http.Request) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.faults == 0 || tr.match != nil && !tr.match(r) {
		return false
	}
	if tr.faults > 0 {
		tr.faults--
	}
	return true
}

func isManifest(r *http.Request) bool { return strings.Contains(r.URL.Path, "/manifests/") }

// push writes img to repo:tag and returns the tag and digest references.
func (tr *testRegistry) push(t testing.TB, repoTag string, img v1.Image) (tagRef, digestRef string) {
	t.Helper()
	ref, err := name.ParseReference(tr.Host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.String(), ref.Context().Digest(d.String()).String()
}

// tarEntry is one entry of a test layer.
type tarEntry struct {
	name     string
	typ      byte
	body     string
	linkname string
	size     int64 // when set, the header claims this size (the body is then zeros)
}

func layer(t testing.TB, entries ...tarEntry) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Linkname: e.linkname, Mode: 0o644, ModTime: time.Unix(0, 0)}
		if typ == tar.TypeDir {
			h.Mode = 0o755
		}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.body))
			if e.size > 0 {
				h.Size = e.size
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if e.size > 0 {
				if _, err := io.CopyN(tw, zeros{}, e.size); err != nil {
					t.Fatal(err)
				}
			} else if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// image builds an image of layers (bottom first) with labels.
func image(t testing.TB, labels map[string]string, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.Config.Labels = labels
	cf.OS, cf.Architecture = "linux", "amd64"
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

var indexLabels = map[string]string{LabelConfigs: "/configs"}

// indexImage is an index image with a base layer (to show that only /configs is read) and the given
// catalog files under /configs.
func indexImage(t testing.TB, files map[string]string) v1.Image {
	t.Helper()
	base := layer(t,
		tarEntry{name: "bin/", typ: tar.TypeDir},
		tarEntry{name: "bin/opm", body: "not really opm"},
		tarEntry{name: "etc/passwd", body: "root:x:0:0::/root:/bin/sh\n"},
		tarEntry{name: "lib", typ: tar.TypeSymlink, linkname: "/usr/lib"},
	)
	entries := []tarEntry{{name: "configs/", typ: tar.TypeDir}}
	for _, p := range sortedKeys(files) {
		entries = append(entries, tarEntry{name: "configs/" + p, body: files[p]})
	}
	return image(t, indexLabels, base, layer(t, entries...))
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// zncCatalog returns the real rendered catalog of zncdatadev/kubedoop-catalog: package -> index.yaml.
func zncCatalog(t testing.TB) map[string]string {
	t.Helper()
	dir := shareddata.Dir(t, "refconfigs", "zncdatadev-kubedoop-catalog", "rendered-catalog@af13ed5")
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "index.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(data)
	}
	return out
}

// testOptions renders with a private cache and fast retries.
func testOptions(t testing.TB) Options {
	return Options{CacheDir: t.TempDir(), RemoteOptions: []remote.Option{fastRetry}}
}

// config builds a references config the way ParseConfig would.
func config(t testing.TB, name string, refs ...Reference) *Config {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: " + name + "\nreferences:\n")
	for _, r := range refs {
		b.WriteString("- name: " + r.Name + "\n  image: " + r.Image + "\n")
	}
	cfg, ds := ParseConfig([]byte(b.String()), "catalog.yaml")
	if len(ds) > 0 {
		t.Fatalf("config: %v", ds)
	}
	return cfg
}

// readAll returns every file under dir as path -> content.
func readAll(t testing.TB, dir string) map[string]string {
	t.Helper()
	files, err := filetree.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, data := range files {
		out[filepath.ToSlash(p)] = string(data)
	}
	return out
}
