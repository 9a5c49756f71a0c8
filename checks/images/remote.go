package images

import (
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/regnet"
)

// defaultBackoff retries a transient failure three times, after about 1 s, 2 s and 4 s.
var defaultBackoff = remote.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: 4}

// retryStatusCodes are the HTTP statuses retried with backoff before a registry counts as unavailable.
var retryStatusCodes = []int{
	http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
	http.StatusGatewayTimeout, http.StatusTooManyRequests,
}

// errPlainHTTP is returned for a plain-HTTP request to a host that is not loopback.
var errPlainHTTP = regnet.ErrPlainHTTP

// loopbackOnlyHTTP refuses plain HTTP except to loopback registries (see regnet.LoopbackOnlyHTTP).
type loopbackOnlyHTTP struct{ next http.RoundTripper }

func (t loopbackOnlyHTTP) RoundTrip(req *http.Request) (*http.Response, error) {
	return regnet.LoopbackOnlyHTTP{Next: t.next}.RoundTrip(req)
}

// parseRef parses an image reference; loopback registries are marked insecure (plain HTTP allowed).
func parseRef(s string) (name.Reference, error) { return regnet.ParseReference(s) }

// newPuller builds the one Puller a Check shares, so each repository authenticates once.
func (c *Checker) newPuller(jobs int) (*remote.Puller, error) {
	keychain := c.Keychain
	if keychain == nil {
		keychain = authn.DefaultKeychain
	}
	backoff := c.Backoff
	if backoff.Steps == 0 {
		backoff = defaultBackoff
	}
	opts := []remote.Option{
		remote.WithTransport(loopbackOnlyHTTP{next: remote.DefaultTransport}),
		remote.WithAuthFromKeychain(keychain),
		remote.WithRetryBackoff(backoff),
		remote.WithRetryStatusCodes(retryStatusCodes...),
		remote.WithJobs(jobs),
		remote.WithUserAgent("catalogbot"),
	}
	p, err := remote.NewPuller(append(opts, c.RemoteOptions...)...)
	if err != nil {
		return nil, fmt.Errorf("image checker: remote options: %w", err)
	}
	return p, nil
}
