package statuspage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
)

// runPage is what a run's page shows: the run, and why its job is waiting when an attempt failed.
type runPage struct {
	*store.Run
	// CheckRunID is the run's check run (0: none yet).
	CheckRunID int64
	Retry      *retryInfo
}

// retryInfo is the run's job when its last attempt ended with an error: a job waiting to retry, running
// again, or failed for good. Error is the attempt's error, cut to store.MaxErrorRunes.
type retryInfo struct {
	State                 queue.State
	Attempts, MaxAttempts int
	Error                 string
	Next                  time.Time
}

// runPage adds the run's job to its page when the job's last attempt failed. The job may be gone (pruned
// after the retention): the page then shows the run alone.
func (p *Pages) runPage(ctx context.Context, r *store.Run, checkRunID int64) runPage {
	page := runPage{Run: r, CheckRunID: checkRunID}
	j, err := p.queue.Get(ctx, r.JobID)
	if err != nil {
		p.log.Debug("run page: no job", "run", r.ID, "job", r.JobID, "err", err)
		return page
	}
	if j.Error == "" || j.State == queue.Done {
		return page
	}
	page.Retry = &retryInfo{State: j.State, Attempts: j.Attempts, MaxAttempts: p.maxAttempts, Error: store.ClipRunes(j.Error, store.MaxErrorRunes)}
	if j.State == queue.Queued {
		page.Retry.Next = j.RunAfter
	}
	return page
}

// pageKeySchema holds the key run page links are derived from, shared by replicas on one database.
const pageKeySchema = `
CREATE TABLE IF NOT EXISTS page_keys (
	id  INTEGER NOT NULL PRIMARY KEY,
	key TEXT    NOT NULL
);
`

// LoadKey returns the database's page key, creating a random 256-bit one on first use.
func LoadKey(ctx context.Context, db *queue.DB) ([]byte, error) {
	if err := db.CreateTables(ctx, "the page key table", pageKeySchema); err != nil {
		return nil, err
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("page key: %w", err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO page_keys (id, key) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", hex.EncodeToString(fresh)); err != nil {
		return nil, fmt.Errorf("page key: %w", err)
	}
	var stored string
	if err := db.QueryRowContext(ctx, "SELECT key FROM page_keys WHERE id = 1").Scan(&stored); err != nil {
		return nil, fmt.Errorf("page key: %w", err)
	}
	key, err := hex.DecodeString(stored)
	if err != nil || len(key) != 32 {
		return nil, fmt.Errorf("page key: the stored key is corrupt")
	}
	return key, nil
}

// RunPath is the path of a run's page (the check run's details link, after the bot's public URL), under
// its unguessable page ID.
func (p *Pages) RunPath(id int64) string { return "/runs/" + p.pageID(id) }

// pageID is a run's page name: its number and a 128-bit MAC of it under the page key, so page links
// cannot be guessed from the sequential run numbers.
func (p *Pages) pageID(id int64) string {
	m := hmac.New(sha256.New, p.key)
	fmt.Fprintf(m, "run page %d", id)
	return strconv.FormatInt(id, 10) + "-" + hex.EncodeToString(m.Sum(nil)[:16])
}

var errBadPageID = errors.New("not a run page")

// parsePageID reads "/runs/{id}": a page ID (id-MAC; withMAC true when the MAC is right) or, for the
// logged-in status page's own links, a bare run number.
func (p *Pages) parsePageID(s string) (id int64, withMAC bool, err error) {
	num, _, hasMAC := strings.Cut(s, "-")
	id, err = strconv.ParseInt(num, 10, 64)
	if err != nil || id <= 0 {
		return 0, false, errBadPageID
	}
	if !hasMAC {
		return id, false, nil
	}
	if !hmac.Equal([]byte(p.pageID(id)), []byte(s)) {
		return 0, false, errBadPageID
	}
	return id, true, nil
}

// handleRun serves a run's page. Without the status token only a correct page ID (the check run's
// details link) of a run of a public repository shows anything; everything else is the same 401 (or 404
// for a wrong page ID), so nothing tells which runs or repositories exist.
func (p *Pages) handleRun(w http.ResponseWriter, r *http.Request) {
	authed := p.auth.authenticated(r)
	id, withMAC, err := p.parsePageID(r.PathValue("id"))
	switch {
	case err != nil && authed:
		http.NotFound(w, r)
		return
	case err != nil:
		http.Error(w, "no such page", http.StatusNotFound)
		return
	case !authed && !withMAC:
		p.auth.deny(w)
		return
	}
	run, err := p.records.RunByID(r.Context(), id)
	if err != nil {
		p.log.Error("run page", "run", id, "err", err)
		http.Error(w, "queue database unavailable", http.StatusServiceUnavailable)
		return
	}
	if !authed && (run == nil || !p.auth.isPublic(run.Repo)) {
		p.auth.deny(w)
		return
	}
	if run == nil {
		http.NotFound(w, r)
		return
	}
	checkRunID, err := p.records.CheckRunID(r.Context(), run.ID)
	if err != nil {
		p.log.Error("run page", "run", id, "err", err)
		http.Error(w, "queue database unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	render(w, "run.html", p.runPage(r.Context(), run, checkRunID))
}
