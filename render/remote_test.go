package render

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

// A registry named in a references config is untrusted: a loopback registry that sends render on to a
// plain-HTTP address off loopback (a redirect, or a token realm) must not get a request out of it.
// go-containerregistry's own fallback would speak plain HTTP to RFC 1918 and *.local hosts.
func TestRenderPlainHTTPOnlyToLoopback(t *testing.T) {
	const offLoopback = "http://192.0.2.1:5000" // TEST-NET-1, off loopback
	cases := map[string]http.HandlerFunc{
		"redirect": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" {
				return
			}
			http.Redirect(w, r, offLoopback+r.URL.Path, http.StatusTemporaryRedirect)
		},
		"token realm": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="`+offLoopback+`/token",service="evil"`)
			w.WriteHeader(http.StatusUnauthorized)
		},
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(h)
			defer srv.Close()
			host := strings.TrimPrefix(srv.URL, "http://")
			cfg := config(t, "catalog", Reference{Name: "commons-operator", Image: host + "/idx/catalog:v1"})
			ctx, cancel := context.WithTimeout(context.Background(), 20e9)
			defer cancel()
			_, ds, err := Render(ctx, cfg, Options{NoCache: true, RemoteOptions: []remote.Option{fastRetry}})
			if err == nil || !strings.Contains(err.Error(), registry.ErrPlainHTTP.Error()) {
				t.Fatalf("want the plain-HTTP request refused, got %v %v", err, ds)
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				t.Fatalf("render waited for an address off loopback: %v", err)
			}
		})
	}
}

// A references config with a wrong reference is the author's to fix even when another reference's
// registry is down at the same time: the render fails as invalid (exit 1), not as an outage (exit 3),
// the order the verdict uses (diag.Worse).
func TestRenderWrongReferenceOutranksOutage(t *testing.T) {
	reg := newTestRegistry(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	cfg := config(t, "catalog",
		Reference{Name: "commons-operator", Image: reg.Host + "/idx/nothing:v1"},
		Reference{Name: "listener-operator", Image: down + "/idx/catalog:v1"})
	_, ds, err := Render(context.Background(), cfg, Options{NoCache: true, RemoteOptions: []remote.Option{fastRetry}})
	if diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("want an invalid render, got %v (%s)", err, diag.CategoryOf(err))
	}
	rules := map[string]bool{}
	for _, d := range ds {
		rules[d.Rule] = true
	}
	if !rules["image-not-found"] || !rules["registry-unavailable"] {
		t.Fatalf("want both failures listed, got %v", ds)
	}
}
