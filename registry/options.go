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

// ResponseHeaderTimeout is the default bound on the wait for a registry's answer to start (its headers):
// a registry that accepts connections and never answers costs a request this long, not the request's
// whole deadline (which a large blob's body may need). 8 s: a working registry answers a manifest or token
// request in well under that, and a pull request delivered while eight workers wait on a tarpit is
// checked at most this much later than alone (issue 22: other checks delayed by at most 10 s).
const ResponseHeaderTimeout = 8 * time.Second

// Transport is the transport of every registry request: plain HTTP only to loopback, each request's
// headers bounded by ResponseHeaderTimeout and the whole request (its body included) by timeout when
// timeout > 0.
func Transport(timeout time.Duration) http.RoundTripper { return JobTransport(timeout, 0, nil) }

// JobTransport is Transport with headers (ResponseHeaderTimeout when <= 0) as the bound on the wait for
// an answer's headers, and the job's Breaker br (none when nil) in front: after a request to a host timed
// out, the job's later requests to that host fail at once.
func JobTransport(timeout, headers time.Duration, br *Breaker) http.RoundTripper {
	if headers <= 0 {
		headers = ResponseHeaderTimeout
	}
	t := netdeadline.TransportWith(remote.DefaultTransport, netdeadline.Deadlines{Request: timeout, Headers: headers})
	if br != nil {
		t = br.Wrap(t)
	}
	return LoopbackOnlyHTTP{Next: t}
}

// Options are the remote options every registry client starts from: JobTransport(0, 0) with a Breaker of
// their own, credentials from keychain (nil: authn.DefaultKeychain, the docker config), retries with
// backoff (zero: DefaultBackoff) on RetryStatusCodes and Retryable network errors (never a timeout),
// catalogbot's user agent. Options appended after these replace them (a caller's
// remote.WithTransport(JobTransport(d, h, br)) adds a deadline and shares a breaker across clients).
func Options(keychain authn.Keychain, backoff remote.Backoff) []remote.Option {
	if keychain == nil {
		keychain = authn.DefaultKeychain
	}
	if backoff.Steps == 0 {
		backoff = DefaultBackoff
	}
	return []remote.Option{
		remote.WithTransport(JobTransport(0, 0, &Breaker{})),
		remote.WithAuthFromKeychain(keychain),
		remote.WithRetryBackoff(backoff),
		remote.WithRetryStatusCodes(RetryStatusCodes...),
		remote.WithRetryPredicate(Retryable),
		remote.WithUserAgent("catalogbot"),
	}
}
