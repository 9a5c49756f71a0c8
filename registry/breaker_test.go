package registry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/netdeadline"
)

// countingTarpit accepts connections, counts them and never answers.
func countingTarpit(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int32
	conns := make(chan net.Conn, 100)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			conns <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		close(conns)
		for c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), &n
}

// A registry that accepts and never answers: the first request waits out its deadline once (not
// retried, though the options retry network errors five times), and the job's later requests to the
// host, from any client sharing the Breaker, fail at once with a HostDownError naming it, without a
// connection.
func TestBreakerTarpitCostsOneDeadline(t *testing.T) {
	const deadline = 300 * time.Millisecond
	host, conns := countingTarpit(t)
	ref, err := ParseReference(host + "/ops/foo-bundle:v1")
	if err != nil {
		t.Fatal(err)
	}
	var br Breaker
	opts := append(Options(nil, remote.Backoff{}), remote.WithTransport(JobTransport(deadline, 0, &br)))
	start := time.Now()
	_, err = remote.Get(ref, opts...)
	var te *netdeadline.TimeoutError
	if !errors.As(err, &te) || te.Host != host {
		t.Fatalf("first request: %v, want a TimeoutError naming %s", err, host)
	}
	// the ping races https and http: two connections, each waited on once
	if el, n := time.Since(start), conns.Load(); el > 3*deadline || n > 2 {
		t.Errorf("first request: %s and %d connections, want one deadline (%s) and at most 2 (no retries)", el, n, deadline)
	}
	if br.Down(host) == nil {
		t.Fatalf("the breaker did not trip for %s", host)
	}

	before := conns.Load()
	start = time.Now()
	other := append(Options(nil, remote.Backoff{}), remote.WithTransport(JobTransport(time.Hour, 0, &br)))
	_, err = remote.Get(ref.Context().Tag("v2"), other...)
	var down *HostDownError
	var ne net.Error
	if !errors.As(err, &down) || down.Host != host || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("later request: %v, want a HostDownError naming %s", err, host)
	}
	if el := time.Since(start); el > deadline/2 {
		t.Errorf("later request failed after %s, want at once", el)
	}
	if conns.Load() != before {
		t.Errorf("later request connected to %s", host)
	}

	// Another job's breaker does not know the host.
	var fresh Breaker
	ctx, cancel := context.WithTimeout(context.Background(), deadline/3)
	defer cancel()
	_, err = remote.Get(ref, append(Options(nil, remote.Backoff{}), remote.WithTransport(JobTransport(time.Hour, 0, &fresh)), remote.WithContext(ctx))...)
	if errors.As(err, &down) || fresh.Down(host) != nil {
		t.Errorf("a fresh breaker: %v, tripped %v; want the request tried (and the caller's cancellation not to trip it)", err, fresh.Down(host))
	}
}

func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{&netdeadline.TimeoutError{Host: "quay.io", After: time.Second}, false},
		{&HostDownError{Host: "quay.io", Cause: errors.New("x")}, false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("get: %w", &net.OpError{Op: "dial", Err: timeoutErr{}}), false},
		{errors.New("manifest invalid"), false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
