package registry

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"

	"github.com/catalogbot/catalogbot/netdeadline"
)

// Breaker remembers, for one job, the registry hosts that let a request time out: later requests to
// such a host fail at once with a HostDownError instead of waiting out their own deadline, so a registry
// that accepts connections and never answers costs a job one deadline, not one per request. A Breaker
// is safe for concurrent use; its zero value is ready.
type Breaker struct {
	mu   sync.Mutex
	down map[string]error // host → the timeout that tripped it
}

// HostDownError is a request refused because an earlier request of the same job to Host timed out. It
// is a net.Error (Timeout) naming the host: the infrastructure's failure, never retried.
type HostDownError struct {
	Host  string
	Cause error
}

func (e *HostDownError) Error() string {
	return fmt.Sprintf("registry %s is not asked again: an earlier request timed out (%v)", e.Host, e.Cause)
}

func (e *HostDownError) Unwrap() error   { return e.Cause }
func (e *HostDownError) Timeout() bool   { return true }
func (e *HostDownError) Temporary() bool { return false }

// Wrap returns next with the breaker in front of it.
func (b *Breaker) Wrap(next http.RoundTripper) http.RoundTripper {
	return breakerTransport{b: b, next: next}
}

// Down returns the timeout that tripped host, or nil.
func (b *Breaker) Down(host string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.down[host]
}

func (b *Breaker) trip(host string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down == nil {
		b.down = map[string]error{}
	}
	if b.down[host] == nil {
		b.down[host] = err
	}
}

type breakerTransport struct {
	b    *Breaker
	next http.RoundTripper
}

func (t breakerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	if cause := t.b.Down(host); cause != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &HostDownError{Host: host, Cause: cause}
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		if isTimeout(err) && req.Context().Err() == nil {
			t.b.trip(host, err)
		}
		return nil, err
	}
	resp.Body = breakerBody{ReadCloser: resp.Body, trip: func(err error) {
		if isTimeout(err) && req.Context().Err() == nil {
			t.b.trip(host, err)
		}
	}}
	return resp, nil
}

// breakerBody trips the breaker when the answer's body times out.
type breakerBody struct {
	io.ReadCloser
	trip func(error)
}

func (b breakerBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.trip(err)
	}
	return n, err
}

// isTimeout reports whether err is a request that ran out of time (a deadline of ours, a TLS handshake or
// dial timeout), not the caller's cancellation.
func isTimeout(err error) bool {
	var te *netdeadline.TimeoutError
	if errors.As(err, &te) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Retryable is the retry predicate of every registry client: go-containerregistry's temporary network
// failures (a connection reset or cut short), never a timeout: a host that did not answer within its
// deadline is not asked again at once, and one the job's Breaker refuses not at all.
func Retryable(err error) bool {
	if err == nil || isTimeout(err) {
		return false
	}
	if t, ok := err.(interface{ Temporary() bool }); ok && t.Temporary() {
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}
