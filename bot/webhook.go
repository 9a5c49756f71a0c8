package bot

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/checkrun"
)

// verifySignature checks X-Hub-Signature-256 ("sha256=" + hex HMAC-SHA256 of the body) against every
// secret in constant time. There is no SHA-1 fallback and no unsigned mode: a bot without a secret does
// not start.
func verifySignature(secrets [][]byte, header string, body []byte) bool {
	return verifyMAC(secrets, header, func(w io.Writer) { w.Write(body) })
}

// verifyMAC is verifySignature of the body write writes.
func verifyMAC(secrets [][]byte, header string, write func(io.Writer)) bool {
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
		write(mac)
		// Compare with every secret (no early exit): the time taken does not say which one matched.
		if hmac.Equal(mac.Sum(nil), sig) {
			valid = true
		}
	}
	return valid
}

// handleWebhook answers a delivery within milliseconds: verify, parse, enqueue, wake a worker.
//
// Nothing unauthenticated costs more than its bounded share of memory: what cannot be a valid delivery
// (no well-formed X-Hub-Signature-256, no event or delivery ID, an event the bot does not handle, a
// Content-Length over webhook.maxBodyBytes or none at all) is answered before its body is read, and the
// bodies read to check their signature share webhook.maxBytesInFlight (b.inflight).
func (b *Bot) handleWebhook(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	event := r.Header.Get("X-GitHub-Event")
	delivery := r.Header.Get("X-GitHub-Delivery")
	label := metricEvent(event)
	result := "error"
	defer func() {
		b.metrics.deliveries.WithLabelValues(label, result).Inc()
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
	if !wellFormedSignature(r.Header.Get("X-Hub-Signature-256")) {
		b.log.Warn("webhook signature invalid or missing", "event", label, "delivery", clip(delivery), "remote", r.RemoteAddr)
		reply(http.StatusUnauthorized, "bad_signature", "invalid or missing X-Hub-Signature-256")
		return
	}
	if event == "" || delivery == "" {
		reply(http.StatusBadRequest, "bad_request", "X-GitHub-Event and X-GitHub-Delivery are required")
		return
	}
	if event != "ping" && !handledEvents[event] {
		reply(http.StatusOK, "ignored", "event "+clip(event)+" is not handled")
		return
	}
	limit := b.cfg.Webhook.MaxBodyBytes
	switch {
	case r.ContentLength > limit:
		reply(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("payload larger than %d bytes", limit))
		return
	case r.ContentLength < 0:
		reply(http.StatusLengthRequired, "bad_request", "Content-Length is required")
		return
	}
	held := reserve(r.ContentLength)
	wait, cancel := context.WithTimeout(r.Context(), b.cfg.Webhook.InFlightWait)
	err := b.inflight.acquire(wait, held)
	cancel()
	if err != nil {
		w.Header().Set("Retry-After", "10")
		reply(http.StatusServiceUnavailable, "busy", "too many deliveries are being read: retry later")
		return
	}
	defer b.inflight.release(held)
	var chunks chunkedBody
	defer chunks.free()
	err = chunks.readFrom(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		reply(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("payload larger than %d bytes", limit))
		return
	}
	if err != nil {
		reply(http.StatusBadRequest, "bad_request", "reading the payload failed")
		return
	}
	if !verifyMAC(b.secrets, r.Header.Get("X-Hub-Signature-256"), chunks.writeTo) {
		b.log.Warn("webhook signature invalid or missing", "event", label, "delivery", clip(delivery), "remote", r.RemoteAddr)
		reply(http.StatusUnauthorized, "bad_signature", "invalid or missing X-Hub-Signature-256")
		return
	}
	body := chunks.bytes()
	chunks.free()
	rt, err := b.routeEvent(event, body)
	if err != nil {
		b.log.Warn("webhook payload rejected", "event", event, "delivery", delivery, "err", err)
		reply(http.StatusBadRequest, "bad_request", "payload does not parse as a "+event+" event")
		return
	}
	ctx := r.Context()
	if rt.cancelKey != "" {
		superseded, cancel, err := b.queue.CancelKey(ctx, rt.cancelKey, checkrun.PullRequestClosed)
		if err != nil {
			b.log.Error("cancel jobs", "key", rt.cancelKey, "err", err)
			reply(http.StatusServiceUnavailable, "error", "queue unavailable")
			return
		}
		b.pool.Cancel(cancel...)
		if len(superseded) > 0 {
			b.announcer.send(announcement{target: rt.task.target(), closeJobs: superseded, reason: "The pull request was closed."})
		}
	}
	if rt.job == nil {
		reply(http.StatusOK, "ignored", rt.note)
		return
	}
	if rt.also != nil {
		rt.also.Delivery = delivery + alsoSuffix
		if _, err := b.enqueue(ctx, rt.also, rt.task, ""); err != nil {
			b.log.Error("enqueue delivery", "event", event, "delivery", delivery, "kind", rt.also.Kind, "err", err)
			reply(http.StatusServiceUnavailable, "error", "queue unavailable")
			return
		}
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

// metricEvent is the event label of a delivery: one of the events the bot handles, ping, or "other". The
// header is the sender's to choose, so its values must not become metric series.
func metricEvent(e string) string {
	if e == "ping" || handledEvents[e] {
		return e
	}
	return "other"
}

// wellFormedSignature reports whether an X-Hub-Signature-256 header could be valid: "sha256=" and 64 hex
// digits. Anything else is refused without reading the body.
func wellFormedSignature(h string) bool {
	hexSig, ok := strings.CutPrefix(h, "sha256=")
	if !ok || len(hexSig) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(hexSig)
	return err == nil
}

// clip shortens a header value the sender chose before it is logged.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
