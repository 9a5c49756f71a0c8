package statuspage

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/diag"
)

// Config protects the status pages (/, /runs/{id}) and /metrics: they need the status token, as a
// bearer token (Authorization: Bearer TOKEN) or as the password of HTTP basic authentication (any user
// name; browsers ask for it). Without a token the pages answer 403: they are never open. /webhook
// (signature-checked), /healthz and /readyz need none.
type Config struct {
	// TokenEnv or TokenFile holds the token (at least 16 characters).
	TokenEnv  string `yaml:"tokenEnv"`
	TokenFile string `yaml:"tokenFile"`
	// PublicRepositories ("owner/name", or "owner/*") are public: the details page of one of their runs,
	// reached through its unguessable link, shows without login. Every other repository's runs need the
	// token (the bot does not guess a repository's visibility).
	PublicRepositories []string `yaml:"publicRepositories"`
}

// minToken is the shortest status token accepted.
const minToken = 16

// LoadToken reads the status token ("" when none is configured).
func (c *Config) LoadToken() (string, error) {
	var tok string
	switch {
	case c.TokenFile != "":
		data, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return "", diag.UsageError(fmt.Errorf("status token file: %w", err))
		}
		tok = strings.TrimSpace(string(data))
	case c.TokenEnv != "":
		tok = strings.TrimSpace(os.Getenv(c.TokenEnv))
	default:
		return "", nil
	}
	if len(tok) < minToken {
		return "", diag.UsageError(fmt.Errorf("status token (tokenEnv %q, tokenFile %q) is empty or shorter than %d characters", c.TokenEnv, c.TokenFile, minToken))
	}
	return tok, nil
}

// auth checks the credentials of status page requests.
type auth struct {
	token  [32]byte // sha256 of the token, compared in constant time
	set    bool
	public []string
}

func newAuth(token string, public []string) auth {
	a := auth{public: public}
	if token != "" {
		a.token, a.set = sha256.Sum256([]byte(token)), true
	}
	return a
}

// authenticated tells whether r carries the status token (bearer, or basic authentication's password).
func (a auth) authenticated(r *http.Request) bool {
	if !a.set {
		return false
	}
	var given string
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		given = strings.TrimSpace(tok)
	} else if _, pw, ok := r.BasicAuth(); ok {
		given = pw
	} else {
		return false
	}
	sum := sha256.Sum256([]byte(given))
	return subtle.ConstantTimeCompare(sum[:], a.token[:]) == 1
}

// deny answers a request without valid credentials, telling nothing about what it asked for.
func (a auth) deny(w http.ResponseWriter) {
	if !a.set {
		http.Error(w, "the status pages are disabled: set status.tokenEnv or status.tokenFile in bot.yaml", http.StatusForbidden)
		return
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="catalogbot", charset="UTF-8"`)
	http.Error(w, "authentication required", http.StatusUnauthorized)
}

// RequireToken wraps a handler that needs the status token (the status page's, /metrics).
func (p *Pages) RequireToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.auth.authenticated(r) {
			p.auth.deny(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isPublic tells whether repo is listed as public in status.publicRepositories.
func (a auth) isPublic(repo string) bool {
	repo = strings.ToLower(repo)
	for _, p := range a.public {
		if ok, _ := path.Match(strings.ToLower(p), repo); ok {
			return true
		}
	}
	return false
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
	run, err := p.records.Run(r.Context(), id)
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
	if run.CheckRunID, err = p.records.CheckRunID(r.Context(), run.ID); err != nil {
		p.log.Error("run page", "run", id, "err", err)
		http.Error(w, "queue database unavailable", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Cache-Control", "private, no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	render(w, "run.html", p.runPage(r.Context(), run))
}
