package registry

// Plain HTTP only to loopback registries (tests, the demo), TLS everywhere else.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

// IsLoopback reports whether host ("host" or "host:port") is localhost or a loopback IP.
func IsLoopback(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// RefIsLoopback reports whether an image reference's registry is on this machine.
func RefIsLoopback(ref string) bool {
	host, _, _ := strings.Cut(ref, "/")
	return strings.ContainsAny(host, ".:") && IsLoopback(host) || host == "localhost"
}

// ParseReference parses an image reference; loopback registries are marked insecure (plain HTTP).
func ParseReference(s string, opts ...name.Option) (name.Reference, error) {
	ref, err := name.ParseReference(s, opts...)
	if err != nil {
		return nil, err
	}
	if IsLoopback(ref.Context().RegistryStr()) {
		return name.ParseReference(s, append(opts, name.Insecure)...)
	}
	return ref, nil
}

// ErrPlainHTTP is returned for a plain-HTTP request to a host that is not loopback.
var ErrPlainHTTP = errors.New("plain HTTP is only allowed to loopback registries")

// LoopbackOnlyHTTP refuses plain-HTTP requests except to loopback hosts. go-containerregistry falls back
// to HTTP for RFC 1918 and *.local registries too; catalogbot never does, so a catalog cannot make it
// talk unencrypted to the network around it.
type LoopbackOnlyHTTP struct{ Next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t LoopbackOnlyHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !IsLoopback(req.URL.Host) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Redacted(), ErrPlainHTTP)
	}
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}
