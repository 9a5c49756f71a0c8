package githubtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"testing"
)

// Sign returns the X-Hub-Signature-256 value GitHub sends for body: "sha256=" and the hex HMAC-SHA256 of
// body keyed by secret.
func Sign(secret, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// Deliver posts a webhook delivery to url as GitHub does: X-GitHub-Event, a random X-GitHub-Delivery UUID,
// and X-Hub-Signature-256 when secret is not empty (GitHub signs only with a secret configured). The
// request uses the test's context; the caller closes the response body.
func Deliver(t testing.TB, url, event string, body []byte, secret string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("githubtest: webhook request to %s: %v", url, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/githubtest")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", newUUID())
	req.Header.Set("X-GitHub-Hook-ID", "1")
	if secret != "" {
		req.Header.Set("X-Hub-Signature-256", Sign([]byte(secret), body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("githubtest: delivering %s webhook to %s: %v", event, url, err)
	}
	return resp
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
