package statuspage

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"path"
	"strings"

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
