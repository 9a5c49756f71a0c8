package ghclient

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/gofri/go-github-ratelimit/v2/github_ratelimit/github_secondary_ratelimit"
	"github.com/google/go-github/v92/github"
)

// Config says how to reach and authenticate to GitHub. Exactly one of (AppID and PrivateKey) or Token.
type Config struct {
	// APIURL is the REST API root, "https://api.github.com/" when empty (GitHub Enterprise:
	// "https://HOST/api/v3/").
	APIURL string
	// AppID and PrivateKey (PEM) authenticate as a GitHub App; each event's installation gets its own
	// installation token.
	AppID      int64
	PrivateKey []byte
	// Token is a plain token (PAT or fine-grained token) for one repository.
	Token string
	// Transport is the base transport (http.DefaultTransport when nil).
	Transport http.RoundTripper
	Observer  Observer
	// Retries of 5xx answers and transport errors per request (default 3), starting at Backoff (default
	// 200ms) and doubling.
	Retries int
	Backoff time.Duration
	// MaxRateLimitWait bounds a primary rate-limit wait (default 15 minutes); MaxSecondarySleep bounds one
	// secondary rate-limit sleep (default 2 minutes).
	MaxRateLimitWait  time.Duration
	MaxSecondarySleep time.Duration
	UserAgent         string
}

// Clients hands out a GitHub per installation (App mode) or the one GitHub (token mode).
type Clients struct {
	cfg  Config
	base http.RoundTripper // retry + secondary rate limit
	apps *ghinstallation.AppsTransport

	mu    sync.Mutex
	byID  map[int64]GitHub
	token GitHub
}

// New checks cfg and prepares the transports.
func New(cfg Config) (*Clients, error) {
	app := cfg.AppID != 0 || len(cfg.PrivateKey) > 0
	if app == (cfg.Token != "") {
		return nil, fmt.Errorf("github: configure either a GitHub App (app ID and private key) or a token, not both or neither")
	}
	if app && (cfg.AppID == 0 || len(cfg.PrivateKey) == 0) {
		return nil, fmt.Errorf("github: a GitHub App needs both its app ID and its private key")
	}
	if cfg.APIURL == "" {
		cfg.APIURL = "https://api.github.com/"
	}
	if !strings.HasSuffix(cfg.APIURL, "/") {
		cfg.APIURL += "/"
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport
	}
	if cfg.Observer == nil {
		cfg.Observer = nopObserver{}
	}
	if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 200 * time.Millisecond
	}
	if cfg.MaxRateLimitWait == 0 {
		cfg.MaxRateLimitWait = 15 * time.Minute
	}
	if cfg.MaxSecondarySleep == 0 {
		cfg.MaxSecondarySleep = 2 * time.Minute
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "catalogbot"
	}
	retry := &retryTransport{next: cfg.Transport, observe: cfg.Observer, retries: cfg.Retries, backoff: cfg.Backoff,
		maxWait: cfg.MaxRateLimitWait, maxLimit: 3}
	c := &Clients{cfg: cfg, byID: map[int64]GitHub{}}
	c.base = github_secondary_ratelimit.New(retry, github_secondary_ratelimit.WithSingleSleepLimit(cfg.MaxSecondarySleep, nil))
	if app {
		atr, err := ghinstallation.NewAppsTransport(c.base, cfg.AppID, cfg.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("github app %d: private key: %w", cfg.AppID, err)
		}
		atr.BaseURL = strings.TrimSuffix(cfg.APIURL, "/")
		c.apps = atr
	}
	return c, nil
}

// AppMode reports whether the clients authenticate as a GitHub App.
func (c *Clients) AppMode() bool { return c.apps != nil }

// For returns the client for an installation (App mode; its token is cached and refreshed) or the token
// client (installationID is ignored).
func (c *Clients) For(installationID int64) (GitHub, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.apps == nil {
		if c.token == nil {
			gh, err := c.newClient(&tokenTransport{token: c.cfg.Token, next: c.base}, func(context.Context) (string, error) { return c.cfg.Token, nil })
			if err != nil {
				return nil, err
			}
			c.token = gh
		}
		return c.token, nil
	}
	if installationID == 0 {
		return nil, errNoInstallation
	}
	if gh := c.byID[installationID]; gh != nil {
		return gh, nil
	}
	itr := ghinstallation.NewFromAppsTransport(c.apps, installationID)
	itr.BaseURL = c.apps.BaseURL
	gh, err := c.newClient(itr, itr.Token)
	if err != nil {
		return nil, err
	}
	c.byID[installationID] = gh
	return gh, nil
}

func (c *Clients) newClient(tr http.RoundTripper, token func(context.Context) (string, error)) (GitHub, error) {
	api := c.cfg.APIURL
	cl, err := github.NewClient(github.WithURLs(&api, &api), github.WithHTTPClient(&http.Client{Transport: tr}),
		github.WithUserAgent(c.cfg.UserAgent))
	if err != nil {
		return nil, fmt.Errorf("github client for %s: %w", api, err)
	}
	return &client{gh: cl, token: token, retries: c.cfg.Retries, backoff: c.cfg.Backoff}, nil
}
