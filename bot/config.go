package bot

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/statuspage"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

// Config is the bot's own configuration (bot.yaml). Secrets never appear in it: it names the environment
// variables or files that hold them.
type Config struct {
	// Listen is the HTTP address (default ":8080").
	Listen string `yaml:"listen"`
	// PublicURL is where the bot's pages are reachable from GitHub users (check run details links).
	PublicURL string         `yaml:"publicURL"`
	Webhook   WebhookConfig  `yaml:"webhook"`
	GitHub    GitHubConfig   `yaml:"github"`
	Git       GitConfig      `yaml:"git"`
	Queue     QueueConfig    `yaml:"queue"`
	Checks    ChecksConfig   `yaml:"checks"`
	Timeouts  TimeoutsConfig `yaml:"timeouts"`
	// Status protects the status pages and /metrics (see statuspage.Config).
	Status statuspage.Config `yaml:"status"`
	// Registries are the registry logins, each for named repositories or installations only.
	Registries []RegistryCredential `yaml:"registries"`
	// Smoke is where smoke installs run (see SmokeConfig).
	Smoke SmokeConfig `yaml:"smoke"`
}

// TimeoutsConfig gives every network call a deadline: a registry a pull request names that accepts
// connections and never answers holds a worker for Stage at most, and no job outlives Job.
type TimeoutsConfig struct {
	// RegistryRequest bounds one registry request, its body included (default 2m); GitHubRequest one
	// GitHub API request (default 1m).
	RegistryRequest time.Duration `yaml:"registryRequest"`
	// RegistryResponseHeader bounds the wait for a registry answer's headers (default 8s): a registry
	// that accepts connections and never answers costs a job this long once (a per-job breaker fails the
	// job's later requests to that host at once).
	RegistryResponseHeader time.Duration `yaml:"registryResponseHeader"`
	GitHubRequest          time.Duration `yaml:"githubRequest"`
	// Stage bounds one pipeline stage (default 10m): one that runs out fails as an infrastructure failure.
	Stage time.Duration `yaml:"stage"`
	// Job bounds one job execution (default 30m): at the deadline it is stopped, its lease is no longer
	// renewed, its check run fails as an infrastructure failure and the job fails.
	Job time.Duration `yaml:"job"`
}

// WebhookConfig: every secret listed is accepted (rotation: add the new one, change GitHub, remove the old).
type WebhookConfig struct {
	SecretEnv   []string `yaml:"secretEnv"`
	SecretFiles []string `yaml:"secretFiles"`
	// MaxBodyBytes caps a delivery (default 25 MiB, GitHub's own cap).
	MaxBodyBytes int64 `yaml:"maxBodyBytes"`
	// MaxBytesInFlight bounds the delivery bytes read and held at once, signed or not (default 64 MiB, at
	// least maxBodyBytes). A delivery that does not fit waits up to InFlightWait (default 10s), then gets 503.
	MaxBytesInFlight int64         `yaml:"maxBytesInFlight"`
	InFlightWait     time.Duration `yaml:"inFlightWait"`
}

// GitHubConfig selects App mode (appID + privateKeyFile) or token mode (tokenEnv or tokenFile, one
// repository).
type GitHubConfig struct {
	APIURL         string `yaml:"apiURL"`
	AppID          int64  `yaml:"appID"`
	PrivateKeyFile string `yaml:"privateKeyFile"`
	TokenEnv       string `yaml:"tokenEnv"`
	TokenFile      string `yaml:"tokenFile"`
	// Repository is the one repository served in token mode ("owner/name"); events of others are ignored.
	Repository string `yaml:"repository"`
	// MaxRateLimitWait is the longest a request waits for GitHub's rate limit to reset (default 15m); a job
	// meeting a longer one is queued again to run after the reset.
	MaxRateLimitWait time.Duration `yaml:"maxRateLimitWait"`
}

// GitConfig: CacheDir holds the bare clones; URLTemplate is the remote, with {owner} and {repo}
// (default https://github.com/{owner}/{repo}.git).
type GitConfig struct {
	CacheDir    string `yaml:"cacheDir"`
	URLTemplate string `yaml:"urlTemplate"`
}

// QueueConfig tunes the job queue.
type QueueConfig struct {
	// Path is the SQLite database (one replica).
	Path string `yaml:"path"`
	// DatabaseURLEnv names the environment variable holding a postgres:// URL. When set it wins over
	// Path: the queue and the bot's tables live in that PostgreSQL database, which several replicas may
	// share. The URL holds a password, so it is never written in bot.yaml and never logged.
	DatabaseURLEnv string `yaml:"databaseURLEnv"`

	Workers       int           `yaml:"workers"`
	Lease         time.Duration `yaml:"lease"`
	MaxAttempts   int           `yaml:"maxAttempts"`
	ShutdownGrace time.Duration `yaml:"shutdownGrace"`
	// Retention is how long finished jobs (and their deliveries' deduplication) are kept.
	Retention time.Duration `yaml:"retention"`
}

// ChecksConfig tunes what the bot reports.
type ChecksConfig struct {
	// Name of the check run (default "catalogbot").
	Name string `yaml:"name"`
	// SkipImages skips the images stage (a bot without registry access).
	SkipImages bool `yaml:"skipImages"`
	// MaxAnnotations bounds annotations per check run (default 500, sent 50 per request).
	MaxAnnotations int `yaml:"maxAnnotations"`
	// ProgressInterval is the least time between per-stage check run updates; negative: none.
	ProgressInterval time.Duration `yaml:"progressInterval"`
	// HoldLabel is the label /hold sets (default "do-not-merge/hold").
	HoldLabel string `yaml:"holdLabel"`
}

// DefaultConfig is the configuration an empty bot.yaml gets.
func DefaultConfig() *Config {
	return &Config{
		Listen: ":8080",
		Webhook: WebhookConfig{SecretEnv: []string{"CATALOGBOT_WEBHOOK_SECRET"}, MaxBodyBytes: 25 << 20, MaxBytesInFlight: 64 << 20,
			InFlightWait: 10 * time.Second},
		Git: GitConfig{CacheDir: "/var/lib/catalogbot/git", URLTemplate: "https://github.com/{owner}/{repo}.git"},
		Queue: QueueConfig{Path: "/var/lib/catalogbot/queue.db", Workers: 4, Lease: 2 * time.Minute, MaxAttempts: 5,
			ShutdownGrace: 20 * time.Second, Retention: 7 * 24 * time.Hour},
		Timeouts: TimeoutsConfig{RegistryRequest: 2 * time.Minute, RegistryResponseHeader: registry.ResponseHeaderTimeout, GitHubRequest: time.Minute, Stage: 10 * time.Minute, Job: 30 * time.Minute},
		Checks:   ChecksConfig{Name: "catalogbot", MaxAnnotations: 500, ProgressInterval: 5 * time.Second, HoldLabel: "do-not-merge/hold"},
	}
}

// LoadConfig reads bot.yaml; unknown fields are errors.
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("bot configuration: %w", err))
	}
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return nil, diag.UsageError(fmt.Errorf("bot configuration %s: %w", path, err))
	}
	if err := cfg.Validate(); err != nil {
		return nil, diag.UsageError(fmt.Errorf("bot configuration %s: %w", path, err))
	}
	return cfg, nil
}

// Validate checks what can be checked without reading secrets.
func (c *Config) Validate() error {
	var problems []string
	app := c.GitHub.AppID != 0 || c.GitHub.PrivateKeyFile != ""
	tok := c.GitHub.TokenEnv != "" || c.GitHub.TokenFile != ""
	switch {
	case app && tok:
		problems = append(problems, "github: set either appID and privateKeyFile, or tokenEnv/tokenFile, not both")
	case !app && !tok:
		problems = append(problems, "github: set appID and privateKeyFile (GitHub App) or tokenEnv/tokenFile (token)")
	case app && (c.GitHub.AppID == 0 || c.GitHub.PrivateKeyFile == ""):
		problems = append(problems, "github: a GitHub App needs both appID and privateKeyFile")
	case tok && c.GitHub.Repository == "":
		problems = append(problems, "github.repository: token mode serves one repository; name it (owner/name)")
	}
	if len(c.Webhook.SecretEnv)+len(c.Webhook.SecretFiles) == 0 {
		problems = append(problems, "webhook: name at least one secret (secretEnv or secretFiles)")
	}
	if c.Webhook.MaxBodyBytes <= 0 {
		problems = append(problems, "webhook.maxBodyBytes must be positive")
	}
	if c.Webhook.MaxBytesInFlight < c.Webhook.MaxBodyBytes || c.Webhook.InFlightWait <= 0 {
		problems = append(problems, "webhook: maxBytesInFlight must be at least maxBodyBytes and inFlightWait positive")
	}
	if c.Queue.Workers <= 0 || c.Queue.MaxAttempts <= 0 || c.Queue.Lease < time.Second {
		problems = append(problems, "queue: workers and maxAttempts must be positive and lease at least 1s")
	}
	switch env := c.Queue.DatabaseURLEnv; {
	case env == "" && c.Queue.Path == "":
		problems = append(problems, "queue: set path (SQLite) or databaseURLEnv (PostgreSQL)")
	case env != "" && !envName.MatchString(env):
		// Not quoted: it may be the URL itself, password included.
		problems = append(problems, "queue.databaseURLEnv must be the name of an environment variable holding the PostgreSQL URL, never the URL")
	}
	if t := c.Timeouts; t.RegistryRequest <= 0 || t.RegistryResponseHeader <= 0 || t.GitHubRequest <= 0 || t.Stage <= 0 || t.Job <= 0 {
		problems = append(problems, "timeouts: registryRequest, registryResponseHeader, githubRequest, stage and job must be positive durations")
	}
	if !strings.Contains(c.Git.URLTemplate, "{owner}") || !strings.Contains(c.Git.URLTemplate, "{repo}") {
		problems = append(problems, "git.urlTemplate must contain {owner} and {repo}")
	}
	if !strings.HasPrefix(c.PublicURL, "http://") && !strings.HasPrefix(c.PublicURL, "https://") {
		problems = append(problems, "publicURL must be the http(s) URL of the bot's pages (check run details links point there)")
	}
	problems = append(problems, validateRegistries(c.Registries)...)
	problems = append(problems, c.Smoke.validate()...)
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// QueueDSN is what the queue opens: the PostgreSQL URL in queue.databaseURLEnv's variable when set, else
// the SQLite path. Errors never contain the URL.
func (c *Config) QueueDSN() (string, error) {
	env := c.Queue.DatabaseURLEnv
	if env == "" {
		return c.Queue.Path, nil
	}
	v := strings.TrimSpace(os.Getenv(env))
	if v == "" {
		return "", diag.UsageError(fmt.Errorf("queue database URL variable %s is not set or empty", env))
	}
	if !queue.IsPostgres(v) {
		return "", diag.UsageError(fmt.Errorf("queue database URL variable %s must hold a postgres:// or postgresql:// URL", env))
	}
	return v, nil
}

// GitURL expands URLTemplate for a repository.
func (c *Config) GitURL(owner, repo string) string {
	return strings.NewReplacer("{owner}", owner, "{repo}", repo).Replace(c.Git.URLTemplate)
}

// LoadSecrets reads the webhook secrets from the environment and files. Empty values are refused: an
// empty HMAC key would make every signature trivially forgeable.
func (c *Config) LoadSecrets() ([][]byte, error) {
	var out [][]byte
	for _, env := range c.Webhook.SecretEnv {
		v, ok := os.LookupEnv(env)
		if !ok {
			continue
		}
		if strings.TrimSpace(v) == "" {
			return nil, diag.UsageError(fmt.Errorf("webhook secret variable %s is empty", env))
		}
		out = append(out, []byte(v))
	}
	for _, f := range c.Webhook.SecretFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, diag.UsageError(fmt.Errorf("webhook secret file: %w", err))
		}
		v := bytes.TrimRight(data, "\r\n")
		if len(bytes.TrimSpace(v)) == 0 {
			return nil, diag.UsageError(fmt.Errorf("webhook secret file %s is empty", f))
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, diag.UsageError(fmt.Errorf("no webhook secret is set (looked in %s): refusing to accept unsigned deliveries",
			strings.Join(append(append([]string{}, c.Webhook.SecretEnv...), c.Webhook.SecretFiles...), ", ")))
	}
	return out, nil
}

// LoadCredentials reads the GitHub App private key or the token.
func (c *Config) LoadCredentials() (privateKey []byte, token string, err error) {
	if c.GitHub.PrivateKeyFile != "" {
		key, err := os.ReadFile(c.GitHub.PrivateKeyFile)
		if err != nil {
			return nil, "", diag.UsageError(fmt.Errorf("github app private key: %w", err))
		}
		return key, "", nil
	}
	if c.GitHub.TokenFile != "" {
		data, err := os.ReadFile(c.GitHub.TokenFile)
		if err != nil {
			return nil, "", diag.UsageError(fmt.Errorf("github token file: %w", err))
		}
		token = strings.TrimSpace(string(data))
	} else {
		token = strings.TrimSpace(os.Getenv(c.GitHub.TokenEnv))
	}
	if token == "" {
		return nil, "", diag.UsageError(fmt.Errorf("github token is empty (tokenEnv %q, tokenFile %q)", c.GitHub.TokenEnv, c.GitHub.TokenFile))
	}
	return nil, token, nil
}
