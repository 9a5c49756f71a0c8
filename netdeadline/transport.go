// Package netdeadline gives every HTTP request a deadline of its own: a server that accepts the
// connection and never answers (a tarpit), or answers byte by byte, costs at most that long.
package netdeadline

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// TimeoutError is a request that ran out of its deadline. It is a net.Error (Timeout) naming the host,
// so callers classify it as the network's failure.
type TimeoutError struct {
	Host  string
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s did not answer within %s", e.Host, e.After)
}

func (e *TimeoutError) Timeout() bool   { return true }
func (e *TimeoutError) Temporary() bool { return true }

// Transport wraps next (http.DefaultTransport when nil) so that each request, its answer's body
// included, ends within timeout; timeout <= 0 returns next unchanged.
func Transport(next http.RoundTripper, timeout time.Duration) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if timeout <= 0 {
		return next
	}
	return &transport{next: next, timeout: timeout}
}

type transport struct {
	next    http.RoundTripper
	timeout time.Duration
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	parent := req.Context()
	terr := &TimeoutError{Host: req.URL.Host, After: t.timeout}
	ctx, cancel := context.WithTimeoutCause(parent, t.timeout, terr)
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		expired := context.Cause(ctx) == error(terr)
		cancel()
		if expired {
			return nil, terr
		}
		return nil, err
	}
	resp.Body = &body{ReadCloser: resp.Body, ctx: ctx, cancel: cancel, terr: terr}
	return resp, nil
}

// body ends the request's deadline when closed, and reports a read cut by it as a TimeoutError.
type body struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
	terr   *TimeoutError
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF && context.Cause(b.ctx) == error(b.terr) {
		return n, b.terr
	}
	return n, err
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
