// Package registrytest starts real OCI registries for tests: go-containerregistry's in-process registry
// over real HTTP on loopback, and (for end-to-end lanes) the distribution registry binary.
package registrytest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Registry is a running registry reachable over HTTP on loopback.
type Registry struct {
	// Host is "127.0.0.1:PORT", usable as the registry part of an image reference.
	Host string
	URL  string
}

// New starts go-containerregistry's in-process registry on a loopback port for the test's lifetime.
// wrap, when not nil, wraps the registry handler (to inject failures or count requests).
func New(t testing.TB, wrap func(http.Handler) http.Handler) *Registry {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(discardLogger()))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &Registry{Host: strings.TrimPrefix(srv.URL, "http://"), URL: srv.URL}
}
