package images

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// fastBackoff makes retries take milliseconds: 4 attempts, like the default.
var fastBackoff = remote.Backoff{Duration: time.Millisecond, Factor: 2, Steps: 4}

// testChecker checks anonymously (no docker config of the machine) with fast retries.
func testChecker(p Policy) *Checker {
	return &Checker{Policy: p, Keychain: authn.NewMultiKeychain(), Backoff: fastBackoff}
}

// image returns a small image whose config names the platform; label makes digests distinct.
func image(t testing.TB, platform, label string) v1.Image {
	t.Helper()
	pl, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS: pl.OS, Architecture: pl.Architecture, Variant: pl.Variant,
		Config: v1.Config{Labels: map[string]string{"test": label}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// push writes img to host/repo:tag and returns its digest reference.
func push(t testing.TB, host, repoTag string, img v1.Image) string {
	t.Helper()
	ref, err := name.ParseReference(host+"/"+repoTag, name.Insecure)
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
	return ref.Context().Name() + "@" + d.String()
}

// pushIndex writes an index of one image per platform to host/repo:tag.
func pushIndex(t testing.TB, host, repoTag string, platforms ...string) {
	t.Helper()
	var idx v1.ImageIndex = empty.Index
	for _, p := range platforms {
		pl, _ := v1.ParsePlatform(p)
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: image(t, p, p), Descriptor: v1.Descriptor{Platform: pl}})
	}
	ref, err := name.ParseReference(host+"/"+repoTag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatalf("push index %s: %v", ref, err)
	}
}

// recorder counts the requests a registry receives, by method and kind of path, and the most requests
// ever in flight at once. A request is recorded only while recording is on, so set-up pushes are not.
type recorder struct {
	mu          sync.Mutex
	on          bool
	counts      map[string]int // "HEAD manifest /v2/a/b/manifests/v1", "GET blob", "GET ping"
	inFlight    int
	maxInFlight int
	delay       time.Duration // added to manifest requests, to make concurrency observable
	// fault, when set, may answer a request instead of the registry (n counts earlier manifest requests).
	fault func(w http.ResponseWriter, r *http.Request, n int) bool
	n     int
}

func newRecorder() *recorder { return &recorder{counts: map[string]int{}} }

func (rc *recorder) start() { rc.mu.Lock(); rc.on = true; rc.mu.Unlock() }

func (rc *recorder) count(key string) int { rc.mu.Lock(); defer rc.mu.Unlock(); return rc.counts[key] }

// total counts recorded requests whose key starts with prefix.
func (rc *recorder) total(prefix string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for k, v := range rc.counts {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

func pathKind(p string) string {
	switch {
	case p == "/v2/" || p == "/v2":
		return "ping"
	case strings.Contains(p, "/manifests/"):
		return "manifest"
	case strings.Contains(p, "/blobs/"):
		return "blob"
	}
	return "other"
}

func (rc *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		if !rc.on {
			rc.mu.Unlock()
			next.ServeHTTP(w, r)
			return
		}
		kind := pathKind(r.URL.Path)
		rc.counts[r.Method+" "+kind]++
		rc.counts[r.Method+" "+kind+" "+r.URL.Path]++
		rc.inFlight++
		rc.maxInFlight = max(rc.maxInFlight, rc.inFlight)
		n := rc.n
		if kind == "manifest" {
			rc.n++
		}
		fault, delay := rc.fault, rc.delay
		rc.mu.Unlock()
		defer func() { rc.mu.Lock(); rc.inFlight--; rc.mu.Unlock() }()
		if kind == "manifest" && delay > 0 {
			time.Sleep(delay)
		}
		if fault != nil && fault(w, r, n) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// use is a Ref in a fake catalog file; line and bundle make each use site distinct.
func use(image string, line int, bundle, field string) Ref {
	return Ref{Image: image, File: "pkg/catalog.json", Line: line, Package: "pkg", Bundle: bundle, Field: field}
}

// rules lists each diagnostic as "line rule".
func rules(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, strings.Join([]string{d.Location(), d.Rule}, " "))
	}
	return out
}

// registrytestWithBasicAuth starts a registry that requires basic auth user:password on every request,
// with private/operator:v1 pushed.
func registrytestWithBasicAuth(t *testing.T, rc *recorder, user, password string) *registrytest.Registry {
	t.Helper()
	reg := registrytest.New(t, rc.wrap)
	push(t, reg.Host, "private/operator:v1", image(t, "linux/amd64", "private"))
	rc.fault = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		if u, p, ok := r.BasicAuth(); ok && u == user && p == password {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	rc.start()
	return reg
}
