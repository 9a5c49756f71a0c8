package githubtest

import (
	"crypto/hmac"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

func TestSign(t *testing.T) {
	// The example from GitHub's "Validating webhook deliveries" documentation.
	got := Sign([]byte("It's a Secret to Everybody"), []byte("Hello, World!"))
	want := "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
}

func TestDeliver(t *testing.T) {
	type delivery struct {
		event, id, sig, ctype string
		body                  []byte
	}
	got := make(chan delivery, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Get("X-GitHub-Event"), r.Header.Get("X-GitHub-Delivery"), r.Header.Get("X-Hub-Signature-256"), r.Header.Get("Content-Type"), b}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)

	body := []byte(`{"action":"opened","number":1}`)
	resp := Deliver(t, srv.URL, "pull_request", body, "s3cret")
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	d := <-got
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if d.event != "pull_request" || !uuid.MatchString(d.id) || d.ctype != "application/json" || string(d.body) != string(body) {
		t.Errorf("delivery %+v", d)
	}
	if !hmac.Equal([]byte(d.sig), []byte(Sign([]byte("s3cret"), body))) {
		t.Errorf("signature %s does not verify", d.sig)
	}

	resp = Deliver(t, srv.URL, "ping", []byte(`{}`), "")
	resp.Body.Close()
	if d2 := <-got; d2.sig != "" || d2.id == d.id {
		t.Errorf("unsigned delivery %+v (first id %s)", d2, d.id)
	}
}
