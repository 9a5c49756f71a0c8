package regnet

import (
	"errors"
	"net/http"
	"testing"
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
