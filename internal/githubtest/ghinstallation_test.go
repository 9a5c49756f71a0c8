package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v92/github"
)

// The bot authenticates as a GitHub App installation through ghinstallation: the fake's token endpoint
// must satisfy it (request shape, 201, expires_at parsing) and the token must be reused, not re-fetched.
func TestGHInstallationTokenFlow(t *testing.T) {
	s := New(t)
	s.AddRepo(repo)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	itr, err := ghinstallation.New(http.DefaultTransport, 7, 42, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	itr.BaseURL = s.URL
	base := s.URL + "/"
	gh, err := github.NewClient(github.WithURLs(&base, nil), github.WithHTTPClient(&http.Client{Transport: itr}))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, _, err := gh.Repositories.Get(ctx(t), "octo", "catalog"); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for _, r := range s.Requests() {
		paths = append(paths, r.Method+" "+r.Path)
	}
	want := []string{"POST /app/installations/42/access_tokens", "GET /repos/octo/catalog", "GET /repos/octo/catalog"}
	if len(paths) != len(want) {
		t.Fatalf("requests %q, want %q", paths, want)
	}
	for i := range want {
		if paths[i] != want[i] {
			t.Fatalf("requests %q, want %q", paths, want)
		}
	}
	if tok, err := itr.Token(ctx(t)); err != nil || tok != "ghs_fake42_1" {
		t.Errorf("token %q, %v", tok, err)
	}
}
