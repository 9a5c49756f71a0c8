package netdeadline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// tarpit accepts connections and never answers.
func tarpit(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

func TestTransport(t *testing.T) {
	const d = 200 * time.Millisecond
	client := &http.Client{Transport: Transport(nil, d)}
	var ne net.Error

	// A server that accepts and never answers.
	host := tarpit(t)
	start := time.Now()
	_, err := client.Get("http://" + host + "/v2/")
	var te *TimeoutError
	if !errors.As(err, &te) || te.Host != host || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("tarpit: %v, want a TimeoutError naming %s", err, host)
	}
	if el := time.Since(start); el > 5*d {
		t.Errorf("tarpit answered the client after %s", el)
	}

	// A server that sends headers, then drips the body.
	drip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}))
	defer drip.Close()
	resp, err := client.Get(drip.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.As(err, &te) {
		t.Errorf("dripping body: %v, want a TimeoutError", err)
	}

	// The caller's own cancellation stays the caller's.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+tarpit(t)+"/", nil)
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := client.Do(req); errors.As(err, &te) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled by the caller: %v", err)
	}

	// Other failures stay what they are.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	if _, err := client.Get("http://" + dead + "/"); err == nil || errors.As(err, &te) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("nothing listening: %v, want connection refused", err)
	}

	// A quick server is not affected.
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer ok.Close()
	resp, err = client.Get(ok.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(data) != "ok" {
		t.Errorf("quick server: %q, %v", data, err)
	}
}

// A server that accepts and never answers costs the headers' deadline, not the request's; an answer
// whose headers come in time may take the request's whole deadline for its body. A timeout is not
// Temporary, so retrying clients do not ask the host again.
func TestTransportWithHeadersDeadline(t *testing.T) {
	const headers, request = 150 * time.Millisecond, 3 * time.Second
	client := &http.Client{Transport: TransportWith(nil, Deadlines{Request: request, Headers: headers})}
	host := tarpit(t)
	start := time.Now()
	_, err := client.Get("http://" + host + "/v2/")
	var te *TimeoutError
	if !errors.As(err, &te) || te.Host != host || !te.Headers || te.After != headers {
		t.Fatalf("tarpit: %v, want a TimeoutError for the headers naming %s", err, host)
	}
	if el := time.Since(start); el > request/2 {
		t.Errorf("tarpit answered the client after %s, want about %s", el, headers)
	}
	if te.Temporary() || !te.Timeout() {
		t.Errorf("TimeoutError: Temporary %v, Timeout %v; want false, true", te.Temporary(), te.Timeout())
	}
	if want := host + " did not start answering within 150ms"; te.Error() != want {
		t.Errorf("message %q, want %q", te.Error(), want)
	}

	// Headers at once, then a body slower than the headers' deadline but within the request's.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		time.Sleep(3 * headers)
		io.WriteString(w, "late")
	}))
	defer slow.Close()
	resp, err := client.Get(slow.URL)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(data) != "late" {
		t.Errorf("slow body within the request's deadline: %q, %v", data, err)
	}

	// An upload slower than the headers' deadline but within the request's.
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprint(w, n)
	}))
	defer sink.Close()
	pr, pw := io.Pipe()
	go func() {
		for range 3 {
			time.Sleep(headers)
			pw.Write([]byte("x"))
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPut, sink.URL, pr)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatalf("slow upload within the request's deadline: %v", err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(data) != "3" {
		t.Errorf("slow upload: the server read %q bytes, want 3", data)
	}
}
