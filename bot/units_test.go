package bot

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/ghclient"
	"github.com/catalogbot/catalogbot/bot/statuspage"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/checks/approval"
	"github.com/catalogbot/catalogbot/checks/merge"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", `publicURL: https://bot.example.com
github:
  appID: 12345
  privateKeyFile: /secrets/app.pem
webhook:
  secretFiles: [/secrets/webhook]
queue:
  workers: 8
  lease: 90s
checks:
  skipImages: true
`)
	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Queue.Workers != 8 || cfg.Queue.Lease != 90*time.Second || !cfg.Checks.SkipImages || cfg.Listen != ":8080" ||
		cfg.Checks.Name != "catalogbot" || cfg.Webhook.MaxBodyBytes != 25<<20 {
		t.Errorf("config = %+v", cfg)
	}
	if got := cfg.GitURL("octo", "catalog"); got != "https://github.com/octo/catalog.git" {
		t.Errorf("GitURL = %s", got)
	}
	for name, data := range map[string]string{
		"unknown field": "publicURL: https://x\nlisten: :1\nwebhok: {}\ngithub: {appID: 1, privateKeyFile: k}\n",
		"both modes":    "publicURL: https://x\ngithub: {appID: 1, privateKeyFile: k, tokenEnv: T, repository: o/r}\n",
		"no mode":       "publicURL: https://x\n",
		"token no repo": "publicURL: https://x\ngithub: {tokenEnv: T}\n",
		"no public URL": "github: {appID: 1, privateKeyFile: k}\n",
		"no secrets":    "publicURL: https://x\ngithub: {appID: 1, privateKeyFile: k}\nwebhook: {secretEnv: []}\n",
		"bad template":  "publicURL: https://x\ngithub: {appID: 1, privateKeyFile: k}\ngit: {urlTemplate: https://example.com/repo.git}\n",
	} {
		if _, err := LoadConfig(write(strings.ReplaceAll(name, " ", "-")+".yaml", data)); err == nil || diag.CategoryOf(err) != diag.Usage {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}

func TestLoadSecretsAndCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_WEBHOOK_SECRET", "from-env")
	cfg := DefaultConfig()
	cfg.Webhook.SecretEnv = []string{"TEST_WEBHOOK_SECRET", "TEST_UNSET_SECRET"}
	cfg.Webhook.SecretFiles = []string{file}
	secrets, err := cfg.LoadSecrets()
	if err != nil || len(secrets) != 2 || string(secrets[0]) != "from-env" || string(secrets[1]) != "from-file" {
		t.Fatalf("secrets %q, %v", secrets, err)
	}
	cfg.Webhook.SecretFiles = nil
	cfg.Webhook.SecretEnv = []string{"TEST_UNSET_SECRET"}
	if _, err := cfg.LoadSecrets(); err == nil || !strings.Contains(err.Error(), "refusing") {
		t.Errorf("no secret: %v", err)
	}
	t.Setenv("TEST_EMPTY_SECRET", " ")
	cfg.Webhook.SecretEnv = []string{"TEST_EMPTY_SECRET"}
	if _, err := cfg.LoadSecrets(); err == nil {
		t.Error("an empty secret was accepted")
	}
	t.Setenv("TEST_GITHUB_TOKEN", "ghp_x\n")
	cfg.GitHub = GitHubConfig{TokenEnv: "TEST_GITHUB_TOKEN", Repository: "o/r"}
	if key, tok, err := cfg.LoadCredentials(); err != nil || tok != "ghp_x" || key != nil {
		t.Errorf("token mode: %q %q %v", key, tok, err)
	}
	cfg.GitHub = GitHubConfig{AppID: 1, PrivateKeyFile: filepath.Join(dir, "missing.pem")}
	if _, _, err := cfg.LoadCredentials(); err == nil {
		t.Error("a missing private key was accepted")
	}
}

func TestLoggerRedactsCredentials(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo)
	log.Info("x", "token", "ghs_abc", "webhook_secret", "s3cr3t", "Authorization", "Bearer t", "private_key", "-----BEGIN",
		"repo", "octo/catalog", slog.Group("auth", "password", "hunter2"))
	out := buf.String()
	for _, leaked := range []string{"ghs_abc", "s3cr3t", "Bearer t", "BEGIN", "hunter2"} {
		if strings.Contains(out, leaked) {
			t.Errorf("log leaks %q: %s", leaked, out)
		}
	}
	if !strings.Contains(out, `"repo":"octo/catalog"`) || !strings.Contains(out, `"token":"[redacted]"`) {
		t.Errorf("log = %s", out)
	}
}

func TestReadinessConditions(t *testing.T) {
	b := &Bot{cfg: DefaultConfig(), pages: statuspage.New(statuspage.Options{})}
	b.cfg.PublicURL = "https://bot.example"
	no := false
	pr := &ghclient.PullRequest{Number: 1, HeadSHA: strings.Repeat("a", 40), Labels: []string{"do-not-merge/hold"}, Mergeable: &no}
	pr.BaseRef = "main"
	r := &store.Run{ID: 3, HeadSHA: pr.HeadSHA, BaseRef: "main", Verdict: string(report.Pass),
		Settings: store.Settings{RequiredApprovals: 2, RequiredLabels: []string{"lgtm"}}}
	res := approval.Result{Current: []string{"bob", "mallory"}, Counted: []string{"bob"}, Ineligible: []string{"mallory"},
		Stale: []approval.Stale{{User: "carol", SHA: strings.Repeat("b", 40)}}, CouldApprove: []string{"admin", "bob", "carol"}}
	cs := b.conditions(pr, r, res, store.HoldState{Held: true, Holders: []string{"admin"}})
	if merge.Ready(cs) {
		t.Fatal("all met")
	}
	body := readinessBody("not ready", cs)
	for _, want := range []string{readinessMarker, "- [ ] 1 of 2 required approvals (bob)\n  - approvals that count: admin, bob, carol",
		"  - not counted (may not approve this change): mallory",
		"Approvals given on an earlier head no longer count (a push drops them): carol (on bbbbbbbbbbbb)",
		"placed by admin", "- [ ] label `lgtm` is required",
		"- [ ] on hold (label `do-not-merge/hold`, placed by admin)", "- [ ] GitHub reports merge conflicts", "- [x] catalogbot checks passed on aaaaaaaaaaaa against `main` ([details](https://bot.example" + b.pages.RunPath(3) + "))"} {
		if !strings.Contains(body, want) {
			t.Errorf("body lacks %q:\n%s", want, body)
		}
	}
	if strings.Index(body, "- [ ]") > strings.Index(body, "- [x]") {
		t.Error("met conditions are listed before unmet ones")
	}
	pr.Labels, pr.Mergeable = []string{"LGTM"}, nil
	two := approval.Result{Current: []string{"bob", "carol"}, Counted: []string{"bob", "carol"}}
	if !merge.Ready(b.conditions(pr, r, two, store.HoldState{})) {
		t.Error("not met with two approvals, the label and no hold")
	}
	if merge.Ready(b.conditions(pr, nil, two, store.HoldState{})) {
		t.Error("met without a check")
	}
	// Two approvals given, one by someone who may not approve: not met.
	if merge.Ready(b.conditions(pr, r, approval.Result{Current: []string{"bob", "mallory"}, Counted: []string{"bob"},
		Ineligible: []string{"mallory"}}, store.HoldState{})) {
		t.Error("met with an approval by someone who may not approve")
	}
	// A configuration that could not be loaded blocks merging, whatever else holds.
	broken := *r
	broken.Settings = store.Settings{ConfigError: "invalid configuration"}
	if cs := b.conditions(pr, &broken, two, store.HoldState{}); merge.Ready(cs) || !strings.Contains(readinessBody("x", cs), "is invalid (invalid configuration)") {
		t.Errorf("a broken configuration did not block: %+v", cs)
	}
}
