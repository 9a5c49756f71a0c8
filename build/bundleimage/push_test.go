package bundleimage

import (
	"net/http"
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
