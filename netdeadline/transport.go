// Package netdeadline gives every HTTP request a deadline of its own: a server that accepts the
// connection and never answers (a tarpit), or answers byte by byte, costs at most that long. A shorter
// deadline may bound the wait for the answer's headers alone.
package netdeadline

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// TimeoutError is a request that ran out of its deadline. It is a net.Error (Timeout) naming the host,
// so callers classify it as the network's failure. It is not Temporary: a host that let one request
// wait out its deadline is not asked again at once (retrying clients such as go-containerregistry's
// retry what is Temporary).
type TimeoutError struct {
	Host  string
	After time.Duration
	// Headers is set when the request ran out of its deadline for the answer's headers.
	Headers bool
}

func (e *TimeoutError) Error() string {
	if e.Headers {
		return fmt.Sprintf("%s did not start answering within %s", e.Host, e.After)
	}
	return fmt.Sprintf("%s did not answer within %s", e.Host, e.After)
}

func (e *TimeoutError) Timeout() bool   { return true }
func (e *TimeoutError) Temporary() bool { return false }

// Deadlines bound one request. Zero or negative fields do not bound.
type Deadlines struct {
	// Request bounds the whole request, its answer's body included.
	Request time.Duration
	// Headers bounds the wait for the answer's headers of a request without a body (a server that
	// accepts and never answers costs this long, not Request). A request with a body (an upload) has
	// only Request: sending the body may take longer.
	Headers time.Duration
}

// Transport wraps next (http.DefaultTransport when nil) so that each request, its answer's body
// included, ends within timeout; timeout <= 0 returns next unchanged.
func Transport(next http.RoundTripper, timeout time.Duration) http.RoundTripper {
	return TransportWith(next, Deadlines{Request: timeout})
}

// TransportWith wraps next (http.DefaultTransport when nil) with d; with no deadline it returns next
// unchanged.
func TransportWith(next http.RoundTripper, d Deadlines) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	if d.Request > 0 && d.Headers >= d.Request {
		d.Headers = 0 // the request's deadline comes first
	}
	if d.Request <= 0 && d.Headers <= 0 {
		return next
	}
	return &transport{next: next, d: d}
}

type transport struct {
	next http.RoundTripper
	d    Deadlines
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancelCause := context.WithCancelCause(req.Context())
	var terr, herr *TimeoutError
	var request, headers *time.Timer
	if t.d.Request > 0 {
		terr = &TimeoutError{Host: req.URL.Host, After: t.d.Request}
		request = time.AfterFunc(t.d.Request, func() { cancelCause(terr) })
	}
	if t.d.Headers > 0 && (req.Body == nil || req.Body == http.NoBody) {
		herr = &TimeoutError{Host: req.URL.Host, After: t.d.Headers, Headers: true}
		headers = time.AfterFunc(t.d.Headers, func() { cancelCause(herr) })
	}
	cancel := func() {
		if request != nil {
			request.Stop()
		}
		cancelCause(nil)
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if headers != nil {
		headers.Stop()
	}
	if err != nil {
		cause := context.Cause(ctx)
		cancel()
		switch {
		case terr != nil && cause == error(terr):
			return nil, terr
		case herr != nil && cause == error(herr):
			return nil, herr
		}
		return nil, err
	}
	if herr != nil && context.Cause(ctx) == error(herr) {
		// the headers came as their deadline passed, which cancelled the request
		resp.Body.Close()
		cancel()
		return nil, herr
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
	if err != nil && err != io.EOF && b.terr != nil && context.Cause(b.ctx) == error(b.terr) {
		return n, b.terr
	}
	return n, err
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
