package bot

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

func TestVerifySignature(t *testing.T) {
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	old, cur := []byte("old-secret"), []byte("new-secret")
	for _, tc := range []struct {
		name    string
		secrets [][]byte
		header  string
		want    bool
	}{
		{"current", [][]byte{cur}, githubtest.Sign(cur, body), true},
		{"rotation: old accepted while listed", [][]byte{old, cur}, githubtest.Sign(old, body), true},
		{"rotation: new accepted", [][]byte{old, cur}, githubtest.Sign(cur, body), true},
		{"forged with another secret", [][]byte{cur}, githubtest.Sign([]byte("guess"), body), false},
		{"unsigned", [][]byte{cur}, "", false},
		{"sha1 only", [][]byte{cur}, "sha1=" + sha1Sig(cur, body), false},
		{"sha1 value under sha256", [][]byte{cur}, "sha256=" + sha1Sig(cur, body), false},
		{"not hex", [][]byte{cur}, "sha256=zz", false},
		{"tampered body", [][]byte{cur}, githubtest.Sign(cur, append(body, ' ')), false},
	} {
		if got := verifySignature(tc.secrets, tc.header, body); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func sha1Sig(secret, body []byte) string {
	m := hmac.New(sha1.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestNewRefusesToStartWithoutSecret(t *testing.T) {
	q, err := queue.Open(t.Context(), t.TempDir()+"/q.db")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	cfg := DefaultConfig()
	for name, secrets := range map[string][][]byte{"none": nil, "empty": {[]byte("ok"), {}}} {
		if _, err := New(t.Context(), Options{Config: cfg, Secrets: secrets, GitHub: fakeClients{}, Queue: q}); err == nil {
			t.Errorf("%s: the bot started", name)
		}
	}
}

// Deliveries GitHub did not sign with our secret are refused before anything is parsed or queued;
// oversized ones are refused with 413; a replayed delivery is answered "duplicate" and runs once.
func TestWebhookReliability(t *testing.T) {
	h := newHarness(t, func(h *harness) { h.cfg.Webhook.MaxBodyBytes = 64 << 10 })
	main := h.seedMain(repoConfig + "  requiredLabels: [lgtm]\n")
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	body := payload(t, "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))

	for _, tc := range []struct {
		name, event, secret string
		body                []byte
		status              int
	}{
		{"forged", "pull_request", "not-the-secret", body, http.StatusUnauthorized},
		{"unsigned", "pull_request", "", body, http.StatusUnauthorized},
		{"oversized", "pull_request", testSecret, bytes.Repeat([]byte(" "), 100<<10), http.StatusRequestEntityTooLarge},
		{"not JSON", "pull_request", testSecret, []byte("{"), http.StatusBadRequest},
		{"ping", "ping", testSecret, payload(t, "ping/payload.json", nil), http.StatusOK},
		{"unhandled event", "status", testSecret, payload(t, "status/payload.json", nil), http.StatusOK},
		{"installation", "installation", testSecret, payload(t, "installation/created.payload.json", nil), http.StatusOK},
		{"draft", "pull_request", testSecret, payload(t, "pull_request/opened.payload.json", prEdits(1, "alice", head, main,
			map[string]any{"pull_request.draft": true})), http.StatusOK},
	} {
		if got, text := h.post(tc.event, "", tc.body, tc.secret); got != tc.status {
			t.Errorf("%s: %d %q, want %d", tc.name, got, text, tc.status)
		}
	}
	resp, err := http.Get(h.srv.URL + "/webhook")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /webhook: %d", resp.StatusCode)
	}
	const id = "72d3162e-cc78-11e3-81ab-4c9367dc0958"
	if status, text := h.post("pull_request", id, body, testSecret); status != http.StatusAccepted {
		t.Fatalf("first delivery: %d %s", status, text)
	}
	if status, text := h.post("pull_request", id, body, testSecret); status != http.StatusOK || !strings.Contains(text, "duplicate") {
		t.Errorf("replayed delivery: %d %q, want 200 duplicate", status, text)
	}
	h.waitIdle()
	h.post("pull_request", id, body, testSecret) // replayed after it ran
	h.waitIdle()
	var ours int
	for _, cr := range h.gh.CheckRuns(repoFull) {
		if cr.HeadSHA == head {
			ours++
		}
	}
	if ours != 1 {
		t.Errorf("%d check runs for one delivery sent three times, want 1", ours)
	}
	// A closed pull request's queued check is dropped.
	h.block.block()
	h.post("pull_request", "", body, testSecret)
	<-h.block.arrived
	h.post("pull_request", "", payload(t, "pull_request/closed.payload.json", prEdits(1, "alice", head, main, nil)), testSecret)
	h.waitFor("the running check to stop", func() bool {
		depth, _ := h.q.Depth(context.Background())
		return depth[queue.Running] == 0
	})
	h.block.unblock()
	h.waitIdle()

	metrics := h.get("/metrics")
	for _, want := range []string{
		`catalogbot_webhook_deliveries_total{event="pull_request",result="bad_signature"} 2`,
		`catalogbot_webhook_deliveries_total{event="pull_request",result="too_large"} 1`,
		`catalogbot_webhook_deliveries_total{event="pull_request",result="duplicate"} 2`,
		`catalogbot_webhook_deliveries_total{event="ping",result="ignored"} 1`,
		`catalogbot_installation_events_total{action="created",event="installation"} 1`,
		`catalogbot_queue_jobs{state="superseded"} 1`,
		`catalogbot_github_api_calls_total{method="POST",status="201"}`,
		`catalogbot_github_rate_limit_remaining{resource="core"} 4999`,
		`catalogbot_stage_duration_seconds_count{stage="validate",status="pass"} 1`,
		`catalogbot_jobs_total{kind="check",outcome="superseded"} 1`,
		`catalogbot_webhook_duration_seconds_bucket`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if got := h.get("/healthz"); got != "ok\n" {
		t.Errorf("/healthz = %q", got)
	}
	if got := h.get("/readyz"); got != "ready\n" {
		t.Errorf("/readyz = %q", got)
	}
	logs := h.logs.String()
	for _, secret := range []string{testSecret, "ghs_fake", "PRIVATE KEY"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs contain %q", secret)
		}
	}
	if !strings.Contains(logs, `"msg":"delivery queued"`) || !strings.Contains(logs, `"msg":"webhook signature invalid or missing"`) {
		t.Errorf("the logs lack the expected JSON records:\n%s", logs)
	}
}

// get fetches path with the status token.
func (h *harness) get(path string) string {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+statusToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

// Webhook answers are fast because they only enqueue: even with a slow pipeline running.
func TestWebhookAnswersWhileJobsRun(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	h.block.block()
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	<-h.block.arrived
	body := payload(t, "pull_request/labeled.payload.json", prEdits(1, "alice", head, main, nil))
	var worst time.Duration
	for range 50 {
		start := time.Now()
		if status, _ := h.post("pull_request", "", body, testSecret); status != http.StatusAccepted {
			t.Fatalf("status %d", status)
		}
		worst = max(worst, time.Since(start))
	}
	if worst > time.Second {
		t.Errorf("slowest answer %s while a check runs", worst)
	}
	h.block.unblock()
	h.waitIdle()
}

// fakeClients hands out no client: for tests that never reach GitHub.
type fakeClients struct{}

func (fakeClients) For(int64) (ghclient.GitHub, error) {
	return nil, errors.New("no GitHub in this test")
}

// In token mode the bot serves one repository and ignores the others' events.
func TestTokenModeServesOneRepository(t *testing.T) {
	q, err := queue.Open(t.Context(), t.TempDir()+"/q.db")
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	cfg := DefaultConfig()
	cfg.GitHub.Repository = "Octo/Catalog"
	b, err := New(t.Context(), Options{Config: cfg, Secrets: [][]byte{[]byte("s")}, GitHub: fakeClients{}, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	other, err := b.routeEvent("pull_request", payload(t, "pull_request/opened.payload.json", nil))
	if err != nil || other.job != nil || !strings.Contains(other.note, "not served") {
		t.Errorf("Codertocat/Hello-World: %+v, %v", other, err)
	}
	ours, err := b.routeEvent("pull_request", payload(t, "pull_request/opened.payload.json", prEdits(2, "a", "h", "b", nil)))
	if err != nil || ours.job == nil || ours.job.Kind != kindCheck || ours.job.Key != "pr:octo/catalog#2" || !ours.job.CancelRunning {
		t.Errorf("octo/catalog: %+v, %v", ours, err)
	}
}
