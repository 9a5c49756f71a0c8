package bundleimage

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/registry"
)

// fastRetry keeps retried requests quick in tests: 3 attempts.
var fastRetry = remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3}

// Push writes the image by digest, then its tag, and returns the digest reference of the image Build
// gives; the registry serves that image under the tag.
func TestPushByDigestThenTag(t *testing.T) {
	var (
		mu   sync.Mutex
		puts []string
	)
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
				mu.Lock()
				puts = append(puts, r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:])
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	ref := reg.Host + "/community-operator-pipeline-prod/openstack-lightspeed-operator:0.0.2"
	got, err := Push(t.Context(), fixture, ref)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Build(t.Context(), fixture)
	if err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if want := reg.Host + "/community-operator-pipeline-prod/openstack-lightspeed-operator@" + d.String(); got != want {
		t.Errorf("Push = %s, want %s", got, want)
	}
	if want := []string{d.String(), "0.0.2"}; !slices.Equal(puts, want) {
		t.Errorf("manifest PUTs %v, want %v (by digest, then the tag)", puts, want)
	}
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(tag)
	if err != nil || desc.Digest != d {
		t.Errorf("the tag holds %v (%v), want %s", desc, err, d)
	}
}

// A registry that fails (5xx, 429 after the retries) or never answers makes Push fail within its
// deadline, with an infrastructure error naming the reference; the tag is never written.
func TestPushRegistryFailuresNameTheReference(t *testing.T) {
	cases := []struct {
		name   string
		status int // 0: never answers
		opts   []Option
		want   string
	}{
		{"503", http.StatusServiceUnavailable, []Option{WithRetry(fastRetry)}, "503 Service Unavailable"},
		{"429", http.StatusTooManyRequests, []Option{WithRetry(fastRetry)}, "429 Too Many Requests"},
		{"never answers: the push's deadline", 0, []Option{WithTimeout(time.Second)}, "no success within 1s"},
		{"never answers: the answer's headers", 0, []Option{WithTransport(registry.JobTransport(0, 300*time.Millisecond, nil))}, "did not start answering within 300ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan struct{})
			var (
				mu   sync.Mutex
				tags int
			)
			reg := registrytest.New(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/manifests/0.0.2") {
						mu.Lock()
						tags++
						mu.Unlock()
					}
					if c.status == 0 {
						select {
						case <-done:
						case <-r.Context().Done():
						}
						return
					}
					w.WriteHeader(c.status)
				})
			})
			defer close(done)
			ref := reg.Host + "/pipeline/openstack-lightspeed-operator:0.0.2"
			start := time.Now()
			got, err := Push(t.Context(), fixture, ref, c.opts...)
			took := time.Since(start)
			if err == nil {
				t.Fatalf("Push = %s, want an error", got)
			}
			if !strings.Contains(err.Error(), "pushing bundle image "+ref+": ") || !strings.Contains(err.Error(), c.want) || diag.CategoryOf(err) != diag.Infra {
				t.Errorf("err = %v (%s); want an infrastructure error naming %s and %q", err, diag.CategoryOf(err), ref, c.want)
			}
			if took > 10*time.Second {
				t.Errorf("Push took %s", took)
			}
			if tags > 0 {
				t.Errorf("the tag was written %d times", tags)
			}
		})
	}
}

// A digest reference must be the image's; a reference that is none is the caller's error.
func TestPushRefusesWrongReferences(t *testing.T) {
	reg := registrytest.New(t, nil)
	for ref, cat := range map[string]diag.Category{
		reg.Host + "/p/b@sha256:" + strings.Repeat("0", 64): diag.Usage,
		"Not A Reference": diag.Usage,
	} {
		if got, err := Push(t.Context(), fixture, ref); err == nil || diag.CategoryOf(err) != cat || !strings.Contains(err.Error(), ref) {
			t.Errorf("Push(%s) = %s, %v (%s); want a %s error naming the reference", ref, got, err, diag.CategoryOf(err), cat)
		}
	}
}

// WithRepository builds dir (relative to the repository) through an os.Root of it: a bundle directory,
// or its package directory, that is a symbolic link, and a path leaving the repository, are refused before
// any request.
func TestPushWithRepositoryFollowsNoLink(t *testing.T) {
	repo := t.TempDir()
	real := filepath.Join(repo, "operators", "impostor", "0.0.2")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(real, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(repo, "operators", "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../impostor/0.0.2", filepath.Join(repo, "operators", "p", "0.0.2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("impostor", filepath.Join(repo, "operators", "q")); err != nil {
		t.Fatal(err)
	}
	requests := 0
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests++
			h.ServeHTTP(w, r)
		})
	})
	for dir, want := range map[string]string{
		"operators/p/0.0.2":         "operators/p/0.0.2 is a symbolic link",
		"operators/q/0.0.2":         "operators/q is a symbolic link",
		"operators/../../etc/0.0.2": "path escapes",
	} {
		if got, err := Push(t.Context(), dir, reg.Host+"/p/b:0.0.2", WithRepository(repo)); err == nil || !strings.Contains(err.Error(), want) || diag.CategoryOf(err) != diag.Invalid {
			t.Errorf("Push(%s) = %s, %v (%s); want an invalid-bundle error containing %q", dir, got, err, diag.CategoryOf(err), want)
		}
	}
	if requests > 0 {
		t.Errorf("the registry got %d requests", requests)
	}
	if _, err := Push(t.Context(), "operators/impostor/0.0.2", reg.Host+"/p/b:0.0.2", WithRepository(repo)); err != nil {
		t.Errorf("the real directory: %v", err)
	}
}

// A tag that holds another image is never moved (the catalogs naming it would change under their
// readers); pushing the same directory again succeeds with the same digest (the App retries).
func TestPushNeverReplacesAReleasedTag(t *testing.T) {
	reg := registrytest.New(t, nil)
	ref := reg.Host + "/pipeline/openstack-lightspeed-operator:0.0.2"
	other := copyBundle(t, fixture)
	if err := os.WriteFile(filepath.Join(other, "manifests", "extra.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	released, err := Push(t.Context(), other, ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Push(t.Context(), fixture, ref)
	if err == nil || diag.CategoryOf(err) != diag.Invalid || !strings.Contains(err.Error(), "tag "+ref+" holds another image") {
		t.Errorf("Push over a released tag = %s, %v (%s); want an invalid error saying the tag holds another image", got, err, diag.CategoryOf(err))
	}
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(tag)
	if err != nil || !strings.HasSuffix(released, "@"+desc.Digest.String()) {
		t.Errorf("the tag holds %v (%v), want the released %s", desc, err, released)
	}
	again, err := Push(t.Context(), other, ref)
	if err != nil || again != released {
		t.Errorf("pushing the released directory again = %s, %v; want %s", again, err, released)
	}
}

// countingTransport counts the requests it carries.
type countingTransport struct {
	mu sync.Mutex
	n  int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// The App's push carries every request with the job's remote options (its transport, deadlines and the
// repository's credentials), the tag check included.
func TestPushWithRemoteOptionsCarriesEveryRequest(t *testing.T) {
	reg := registrytest.New(t, nil)
	var c countingTransport
	if _, err := Push(t.Context(), fixture, reg.Host+"/pipeline/bundle:1.0.0", WithRemoteOptions(remote.WithTransport(&c))); err != nil {
		t.Fatal(err)
	}
	first := c.n
	if first == 0 {
		t.Fatal("the push sent no request through the given transport")
	}
	// Again: the tag check (HEAD of the tag) goes through it too.
	if _, err := Push(t.Context(), fixture, reg.Host+"/pipeline/bundle:1.0.0", WithRemoteOptions(remote.WithTransport(&c))); err != nil {
		t.Fatal(err)
	}
	if c.n == first {
		t.Fatal("the second push sent no request through the given transport")
	}
}
