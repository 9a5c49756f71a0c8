package bot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// verifySignature checks X-Hub-Signature-256 ("sha256=" + hex HMAC-SHA256 of the body) against every
// secret in constant time. There is no SHA-1 fallback and no unsigned mode: a bot without a secret does
// not start.
func verifySignature(secrets [][]byte, header string, body []byte) bool {
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return false
	}
	sig, err := hex.DecodeString(hexSig)
	if err != nil || len(sig) != sha256.Size {
		return false
	}
	valid := false
	for _, s := range secrets {
		mac := hmac.New(sha256.New, s)
		mac.Write(body)
		// Compare with every secret (no early exit): the time taken does not say which one matched.
		if hmac.Equal(mac.Sum(nil), sig) {
			valid = true
		}
	}
	return valid
}

// handleWebhook answers a delivery within milliseconds: verify, parse, enqueue, wake a worker.
func (b *Bot) handleWebhook(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	result := "error"
	defer func() {
		b.metrics.deliveries.WithLabelValues(metricEvent(event), result).Inc()
		b.metrics.webhookSeconds.Observe(time.Since(start).Seconds())
	}()
	reply := func(status int, res, msg string) {
		result = res
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		fmt.Fprintln(w, msg)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		reply(http.StatusMethodNotAllowed, "bad_request", "POST only")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, b.cfg.Webhook.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		reply(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("payload larger than %d bytes", b.cfg.Webhook.MaxBodyBytes))
		return
	}
	if err != nil {
		reply(http.StatusBadRequest, "bad_request", "reading the payload failed")
		return
	}
	if !verifySignature(b.secrets, r.Header.Get("X-Hub-Signature-256"), body) {
		b.log.Warn("webhook signature invalid or missing", "event", event, "delivery", delivery, "remote", r.RemoteAddr)
		reply(http.StatusUnauthorized, "bad_signature", "invalid or missing X-Hub-Signature-256")
		return
	}
	if event == "" || delivery == "" {
		reply(http.StatusBadRequest, "bad_request", "X-GitHub-Event and X-GitHub-Delivery are required")
		return
	}
	rt, err := b.routeEvent(event, body)
	if err != nil {
		b.log.Warn("webhook payload rejected", "event", event, "delivery", delivery, "err", err)
		reply(http.StatusBadRequest, "bad_request", "payload does not parse as a "+event+" event")
		return
	}
	ctx := r.Context()
	if rt.cancelKey != "" {
		superseded, cancel, err := b.queue.CancelKey(ctx, rt.cancelKey, "pull request closed")
		if err != nil {
			b.log.Error("cancel jobs", "key", rt.cancelKey, "err", err)
			reply(http.StatusServiceUnavailable, "error", "queue unavailable")
			return
		}
		b.pool.Cancel(cancel...)
		if len(superseded) > 0 {
			b.announcer.send(announcement{task: rt.task, closeJobs: superseded, reason: "The pull request was closed."})
		}
	}
	if rt.job == nil {
		reply(http.StatusOK, "ignored", rt.note)
		return
	}
	rt.job.Delivery = delivery
	res, err := b.enqueue(ctx, rt.job, rt.task, "")
	if err != nil {
		b.log.Error("enqueue delivery", "event", event, "delivery", delivery, "err", err)
		// GitHub does not redeliver by itself; 503 tells an operator the delivery needs a manual redelivery.
		reply(http.StatusServiceUnavailable, "error", "queue unavailable")
		return
	}
	if res.Duplicate {
		reply(http.StatusOK, "duplicate", fmt.Sprintf("duplicate: delivery already queued as job %d", res.ID))
		return
	}
	b.log.Info("delivery queued", "event", event, "delivery", delivery, "job", res.ID, "kind", rt.job.Kind, "repo", rt.job.Repo,
		"superseded", len(res.Superseded), "stopping", len(res.Cancel))
	reply(http.StatusAccepted, "queued", fmt.Sprintf("queued job %d", res.ID))
}

// metricEvent keeps the event label's values to GitHub's event names.
func metricEvent(e string) string {
	if e == "" || len(e) > 40 || strings.Trim(e, "abcdefghijklmnopqrstuvwxyz_") != "" {
		return "other"
	}
	return e
}
