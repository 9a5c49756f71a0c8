// Package regnet holds the registry-network rules every catalogbot package shares: plain HTTP only to
// loopback registries (tests, the demo), TLS everywhere else.
package regnet

import (
	"net"
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
