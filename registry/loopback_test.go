package registry

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
)

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:5000": true, "localhost": true, "LOCALHOST:1": true, "[::1]:443": true, "::1": true,
		"10.0.0.1:5000": false, "registry.local": false, "quay.io": false, "127.0.0.1.nip.io": false,
	} {
		if got := IsLoopback(host); got != want {
			t.Errorf("IsLoopback(%q) = %v", host, got)
		}
	}
	for ref, want := range map[string]bool{
		"127.0.0.1:5000/a/b:1": true, "localhost/a": true, "localhost:5000/a": true,
		"quay.io/a/b": false, "library/busybox": false, "192.168.1.2:5000/a": false,
	} {
		if got := RefIsLoopback(ref); got != want {
			t.Errorf("RefIsLoopback(%q) = %v", ref, got)
		}
	}
}

func TestParseReference(t *testing.T) {
	r, err := ParseReference("127.0.0.1:5000/a/b:1")
	if err != nil || r.Context().Scheme() != "http" {
		t.Fatalf("loopback: %v %v", r, err)
	}
	// go-containerregistry itself would use plain HTTP for RFC 1918 hosts; the transport refuses it.
	req, _ := http.NewRequest("GET", "http://192.168.1.2:5000/v2/", nil)
	if _, err := (LoopbackOnlyHTTP{}).RoundTrip(req); !errors.Is(err, ErrPlainHTTP) {
		t.Fatalf("plain HTTP to a private address: %v", err)
	}
	if _, err := ParseReference("Quay.io/A/B"); err == nil {
		t.Fatal("upper-case repository accepted")
	}
}

type recordingTransport struct{ hosts []string }

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.hosts = append(r.hosts, req.URL.Host)
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("")), Request: req}, nil
}

func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	next := &recordingTransport{}
	rt := LoopbackOnlyHTTP{Next: next}
	for _, u := range []string{"http://127.0.0.1:5000/v2/", "http://localhost:5000/v2/", "http://[::1]:5000/v2/", "https://10.0.0.1/v2/", "https://quay.io/v2/"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := rt.RoundTrip(req); err != nil {
			t.Errorf("RoundTrip(%s) = %v, want passed through", u, err)
		}
	}
	for _, u := range []string{"http://10.0.0.1:5000/v2/", "http://192.168.1.2/v2/", "http://registry.local/v2/", "http://quay.io/v2/"} {
		req, _ := http.NewRequest(http.MethodGet, u, nil)
		if _, err := rt.RoundTrip(req); !errors.Is(err, ErrPlainHTTP) {
			t.Errorf("RoundTrip(%s) = %v, want ErrPlainHTTP", u, err)
		}
	}
	if len(next.hosts) != 5 {
		t.Errorf("next transport saw %v, want only the 5 allowed requests", next.hosts)
	}
	for s, insecure := range map[string]bool{"127.0.0.1:5000/a:v1": true, "localhost/a:v1": true, "quay.io/a:v1": false, "10.0.0.1:5000/a:v1": false} {
		ref, err := ParseReference(s)
		if err != nil {
			t.Fatal(err)
		}
		opts := []name.Option{}
		if insecure {
			opts = append(opts, name.Insecure)
		}
		want, err := name.ParseReference(s, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if ref.Context().Registry != want.Context().Registry {
			t.Errorf("ParseReference(%s) registry = %#v, want insecure=%v", s, ref.Context().Registry, insecure)
		}
	}
}
