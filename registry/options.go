package registry

import (
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/netdeadline"
)

// DefaultBackoff is how a request failing with RetryStatusCodes or a network error is retried: up to
// five tries, waiting about 0.5 s, 1 s, 2 s, then 4 s.
var DefaultBackoff = remote.Backoff{Duration: 500 * time.Millisecond, Factor: 2, Jitter: 0.1, Steps: 5}

// RetryStatusCodes are the HTTP statuses retried before a registry counts as unavailable.
var RetryStatusCodes = []int{
	http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
	http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
}

// Transport is the transport of every registry request: plain HTTP only to loopback, each request (its
// body included) bounded by timeout when timeout > 0.
func Transport(timeout time.Duration) http.RoundTripper {
	return LoopbackOnlyHTTP{Next: netdeadline.Transport(remote.DefaultTransport, timeout)}
}

// Options are the remote options every registry client starts from: Transport(0), credentials from
// keychain (nil: authn.DefaultKeychain, the docker config), retries with backoff (zero: DefaultBackoff) on
// RetryStatusCodes, catalogbot's user agent. Options appended after these replace them (a caller's
// remote.WithTransport(Transport(d)) adds a deadline).
func Options(keychain authn.Keychain, backoff remote.Backoff) []remote.Option {
	if keychain == nil {
		keychain = authn.DefaultKeychain
	}
	if backoff.Steps == 0 {
		backoff = DefaultBackoff
	}
	return []remote.Option{
		remote.WithTransport(Transport(0)),
		remote.WithAuthFromKeychain(keychain),
		remote.WithRetryBackoff(backoff),
		remote.WithRetryStatusCodes(RetryStatusCodes...),
		remote.WithUserAgent("catalogbot"),
	}
}
