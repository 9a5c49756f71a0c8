package images

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

func TestClassify(t *testing.T) {
	opErr := func(err error) error {
		return &url.Error{Op: "Get", URL: "https://r.example/v2/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}
	}
	for _, tc := range []struct {
		name   string
		err    error
		kind   kind
		reason string
	}{
		{"manifest unknown", &transport.Error{StatusCode: 404, Errors: []transport.Diagnostic{{Code: transport.ManifestUnknownErrorCode}}}, kindMissing, "manifest unknown"},
		{"name unknown", &transport.Error{StatusCode: 404, Errors: []transport.Diagnostic{{Code: transport.NameUnknownErrorCode}}}, kindMissing, "repository unknown"},
		{"bare 404 (HEAD)", &transport.Error{StatusCode: 404}, kindMissing, "HTTP 404 Not Found"},
		{"denied", &transport.Error{StatusCode: 403, Errors: []transport.Diagnostic{{Code: transport.DeniedErrorCode}}}, kindUnauthorized, "DENIED"},
		{"bare 401", &transport.Error{StatusCode: 401}, kindUnauthorized, "HTTP 401 Unauthorized"},
		{"bare 403", &transport.Error{StatusCode: 403}, kindUnauthorized, "HTTP 403 Forbidden"},
		{"name invalid", &transport.Error{StatusCode: 400, Errors: []transport.Diagnostic{{Code: transport.NameInvalidErrorCode}}}, kindBadReference, "NAME_INVALID"},
		{"toomanyrequests code", &transport.Error{StatusCode: 429, Errors: []transport.Diagnostic{{Code: transport.TooManyRequestsErrorCode}}}, kindUnavailable, "rate limited (TOOMANYREQUESTS)"},
		{"bare 429", &transport.Error{StatusCode: 429}, kindUnavailable, "rate limited (HTTP 429 Too Many Requests)"},
		{"502", &transport.Error{StatusCode: 502}, kindUnavailable, "HTTP 502 Bad Gateway"},
		{"status wins over message text", &transport.Error{StatusCode: 503, Errors: []transport.Diagnostic{{Code: "X", Message: "manifest unknown"}}}, kindUnavailable, "HTTP 503 Service Unavailable"},
		{"wrapped", fmt.Errorf("HEAD x: %w", &transport.Error{StatusCode: 404}), kindMissing, "HTTP 404 Not Found"},
		{"connection refused", opErr(syscall.ECONNREFUSED), kindUnavailable, "connection refused"},
		{"dns", opErr(&net.DNSError{Err: "no such host", Name: "r.example", IsNotFound: true}), kindUnavailable, "DNS lookup failed"},
		{"unknown authority", &url.Error{Op: "Get", URL: "https://r.example/v2/", Err: &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}}, kindUnavailable, "TLS handshake failed"},
		{"not TLS", &url.Error{Op: "Get", URL: "https://r.example/v2/", Err: tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}}, kindUnavailable, "TLS handshake failed"},
		{"deadline", fmt.Errorf("HEAD: %w", context.DeadlineExceeded), kindUnavailable, "timed out"},
		{"plain http refused", fmt.Errorf("GET: %w", registry.ErrPlainHTTP), kindUnavailable, "plain HTTP refused (TLS required for non-loopback registries)"},
		{"teapot", &transport.Error{StatusCode: 418}, kindUnknown, "HTTP 418 I'm a teapot"},
		{"unclassified", errors.New("manifest digest does not match"), kindUnknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, reason := classify(tc.err)
			if k != tc.kind || reason != tc.reason {
				t.Errorf("classify(%v) = %v, %q; want %v, %q", tc.err, k, reason, tc.kind, tc.reason)
			}
		})
	}
}

// The offline rules run before any request: these refs point at registries that do not exist.
func TestOfflineRules(t *testing.T) {
	refs := []Ref{
		use("", 1, "a", "image"),
		use("Quay.io/UPPER/Case:v1", 2, "b", "image"),
		use("quay.io/ops/operator:v1", 3, "c", "relatedImages[operator]"),
		use("registry.example.com:5000/ops/x:v1", 4, "d", "image"),
		use("nginx:1.25", 5, "e", "relatedImages[web]"),
	}
	c := testChecker(Policy{RequireDigest: true, AllowedRegistries: []string{"127.0.0.1:1"}})
	ds, err := c.Check(context.Background(), refs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg/catalog.json:1 image-bad-reference",
		"pkg/catalog.json:2 image-bad-reference",
		"pkg/catalog.json:3 image-not-digest-pinned", "pkg/catalog.json:3 image-registry-not-allowed",
		"pkg/catalog.json:4 image-not-digest-pinned", "pkg/catalog.json:4 image-registry-not-allowed",
		"pkg/catalog.json:5 image-not-digest-pinned", "pkg/catalog.json:5 image-registry-not-allowed",
	}
	if got := rules(ds); !slices.Equal(got, want) {
		t.Fatalf("diagnostics = %q, want %q", got, want)
	}
	if m := ds[7].Message; !strings.Contains(m, "index.docker.io") || !strings.Contains(m, "relatedImages[web]") || !strings.Contains(m, "127.0.0.1:1") {
		t.Errorf("message %q: want the image's registry, the field and the allowed list", m)
	}
}

func TestAllowedRegistriesNormalize(t *testing.T) {
	cp, err := compilePolicy(Policy{AllowedRegistries: []string{"docker.io", "Registry.Example.com:5000", "quay.io"}})
	if err != nil {
		t.Fatal(err)
	}
	for s, want := range map[string]bool{
		"nginx:1": true, "docker.io/library/nginx:1": true, "quay.io/a/b:1": true,
		"registry.example.com:5000/a:1": true, "registry.example.com/a:1": false, "ghcr.io/a/b:1": false,
	} {
		ref, err := name.ParseReference(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := cp.allows(ref.Context()); got != want {
			t.Errorf("allows(%s) = %v, want %v", s, got, want)
		}
	}
}

func TestMalformedPolicyIsUsageError(t *testing.T) {
	for _, p := range []Policy{
		{RequiredPlatforms: []string{"linux"}},
		{RequiredPlatforms: []string{"linux/arm/v7/x"}},
		{AllowedRegistries: []string{"bad host"}},
		{AllowedRegistries: []string{"quay.io/UPPER CASE/"}},
	} {
		_, err := testChecker(p).Check(context.Background(), []Ref{use("quay.io/a/b:v1", 1, "a", "image")})
		if diag.CategoryOf(err) != diag.Usage {
			t.Errorf("Check with policy %+v: error %v, want a usage error", p, err)
		}
	}
}

// Credentials come from the docker config when no keychain is given.
func TestDockerConfigCredentials(t *testing.T) {
	rc := newRecorder()
	reg := registrytestWithBasicAuth(t, rc, "bot", "s3cret")
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{"auths":{%q:{"username":"bot","password":"s3cret"}}}`, reg.Host)
	if err := os.WriteFile(dir+"/config.json", []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", dir)
	ref := use(reg.Host+"/private/operator:v1", 1, "a", "image")

	ds, err := (&Checker{Backoff: fastBackoff}).Check(context.Background(), []Ref{ref})
	if err != nil || len(ds) != 0 {
		t.Fatalf("Check with docker config credentials = %v, %v; want success", ds, err)
	}
	anonymous, _ := testChecker(Policy{}).Check(context.Background(), []Ref{ref})
	if got := rules(anonymous); !slices.Equal(got, []string{"pkg/catalog.json:1 image-unauthorized"}) {
		t.Errorf("anonymous check = %q, want image-unauthorized", got)
	}
}
