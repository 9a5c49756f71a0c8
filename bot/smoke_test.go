package bot

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

const smokeRepoConfig = repoConfig + `smoke:
  enabled: true
  timeout: 30s
publish:
  base: scratch
`

// A repository enables smoke installs and the bot has no cluster for them: the check cannot judge the
// change (action_required, naming bot.yaml's smoke section), never a silent pass.
func TestSmokeWithoutClusterIsActionRequired(t *testing.T) {
	h := newHarness(t)
	cr := h.smokePR(30, smokeRepoConfig)
	if cr.Conclusion != "action_required" || !strings.Contains(cr.Output.Text+cr.Output.Summary, "smoke section of the bot's configuration") {
		t.Fatalf("check run %s %q:\n%s\n%s", cr.Conclusion, cr.Output.Title, cr.Output.Summary, cr.Output.Text)
	}
	h.requireNotMerged(30, "smoke was asked for and did not run")
}

// bot.yaml's smoke section reaches the pipeline: the smoke stage builds the head's catalog and connects to
// the configured cluster (here a kubeconfig whose API server refuses connections: an infrastructure
// failure naming it, the check a failure, nothing merged).
func TestSmokeUsesTheBotsCluster(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: not-a-secret}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, func(h *harness) { h.cfg.Smoke.Kubeconfig = kubeconfig })
	cr := h.smokePR(31, smokeRepoConfig)
	out := cr.Output.Summary + cr.Output.Text
	if cr.Conclusion != "failure" || !strings.Contains(out, "127.0.0.1:1") || strings.Contains(out, "no cluster settings") {
		t.Fatalf("check run %s %q:\n%s", cr.Conclusion, cr.Output.Title, out)
	}
	if strings.Contains(h.logs.String(), "not-a-secret") || strings.Contains(out, "not-a-secret") {
		t.Error("the kubeconfig's token was logged or reported")
	}
	h.requireNotMerged(31, "the smoke install failed")
}

func TestSmokeConfigValidation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    SmokeConfig
		want string // "" = valid
	}{
		{"none", SmokeConfig{}, ""},
		{"node image", SmokeConfig{NodeImage: "kindest/node:v1.33.1", OLMManifests: t.TempDir(), Concurrency: 2}, ""},
		{"kind cluster", SmokeConfig{KindCluster: "smoke", ImageArchives: []string{file}}, ""},
		{"two clusters", SmokeConfig{KindCluster: "smoke", Kubeconfig: file}, "set one of"},
		{"shared cluster concurrency", SmokeConfig{KindCluster: "smoke", Concurrency: 2}, "must be 1"},
		{"archives into kubeconfig", SmokeConfig{Kubeconfig: file, ImageArchives: []string{file}}, "only be loaded into kind nodes"},
		{"manifests without cluster", SmokeConfig{OLMManifests: t.TempDir()}, "need a cluster"},
		{"missing kubeconfig", SmokeConfig{Kubeconfig: filepath.Join(t.TempDir(), "nope")}, "nope"},
		{"kind config", SmokeConfig{NodeImage: "n", KindConfig: file}, ""},
		{"kind config without created clusters", SmokeConfig{KindCluster: "smoke", KindConfig: file}, "needs nodeImage"},
		{"negative concurrency", SmokeConfig{NodeImage: "n", Concurrency: -1}, "negative"},
		{"olm", SmokeConfig{NodeImage: "n", OLM: "both", OLMv1Manifests: t.TempDir(), Registry: "localhost:5001/catalogbot-smoke"}, ""},
		{"olm v1 without registry", SmokeConfig{NodeImage: "n", OLM: "v1"}, "set smoke.registry"},
		{"olm both without registry", SmokeConfig{NodeImage: "n", OLM: "both"}, "set smoke.registry"},
		{"registry", SmokeConfig{NodeImage: "n", Registry: "registry.ci.example/smoke"}, ""},
		{"registry without host", SmokeConfig{NodeImage: "n", Registry: "catalogbot-smoke"}, "smoke.registry: smoke registry \"catalogbot-smoke\" is not a repository prefix"},
		{"registry without cluster", SmokeConfig{Registry: "localhost:5001/x"}, "smoke.registry needs a cluster"},
		{"unknown olm", SmokeConfig{NodeImage: "n", OLM: "v2"}, `smoke.olm: "v2" is not one of v0, v1, both`},
		{"olmv1 manifests without cluster", SmokeConfig{OLMv1Manifests: t.TempDir()}, "need a cluster"},
		{"missing olmv1 manifests", SmokeConfig{NodeImage: "n", OLMv1Manifests: filepath.Join(t.TempDir(), "nope")}, "nope"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(c.s.validate(), "; ")
			if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
				t.Errorf("validate() = %q, want %q", got, c.want)
			}
		})
	}
}

// The sample bot.yaml in bot/README.md decodes with every field known (a renamed or removed setting
// breaks this test, not a user's deployment).
func TestReadmeSampleConfigDecodes(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "```yaml\n# bot.yaml")
	if i < 0 {
		t.Fatal("bot/README.md has no ```yaml block starting with # bot.yaml")
	}
	sample, _, closed := strings.Cut(string(data[i+len("```yaml\n"):]), "```")
	if !closed {
		t.Fatal("the sample bot.yaml block of bot/README.md is not closed")
	}
	cfg := DefaultConfig()
	dec := yaml.NewDecoder(strings.NewReader(sample))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil {
		t.Fatalf("the sample bot.yaml in README.md: %v", err)
	}
	if cfg.Smoke.NodeImage == "" || cfg.Smoke.Concurrency != 1 || len(cfg.Registries) == 0 {
		t.Errorf("the sample's smoke or registries section was not read: %+v", cfg.Smoke)
	}
}

// bot.yaml's smoke.olm and smoke.olmv1Manifests reach smoke.Run: with a kubeconfig whose API server
// refuses connections, the install is an OLM v1 one (its first step looks for OLM v1's CRDs) and the
// report says so.
func TestSmokeOLMReachesRun(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: dead, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: dead, context: {cluster: dead, user: u}}]
current-context: dead
`), 0o600); err != nil {
		t.Fatal(err)
	}
	manifests := t.TempDir()
	var pushes atomic.Int64
	reg := registrytest.New(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/catalogbot-smoke/catalog-head/manifests/sha256:") {
				pushes.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	h := newHarness(t, func(h *harness) {
		h.cfg.Smoke.Kubeconfig, h.cfg.Smoke.OLM, h.cfg.Smoke.OLMv1Manifests = kubeconfig, "v1", manifests
		h.cfg.Smoke.Registry = reg.Host + "/catalogbot-smoke"
	})
	if in := h.bot.smokeInput(); in.OLM != "v1" || in.OLMv1ManifestsDir != manifests || in.Registry != reg.Host+"/catalogbot-smoke" {
		t.Fatalf("smoke input %+v", in)
	}
	cr := h.smokePR(32, smokeRepoConfig)
	out := cr.Output.Summary + cr.Output.Text
	if cr.Conclusion != "failure" || !strings.Contains(out, "OLM v1") || !strings.Contains(out, "clustercatalogs.olm.operatorframework.io") {
		t.Fatalf("check run %s %q:\n%s", cr.Conclusion, cr.Output.Title, out)
	}
	h.requireNotMerged(32, "the smoke install failed")
	if pushes.Load() == 0 {
		t.Error("the head catalog image was not pushed by digest to smoke.registry before the OLM v1 install")
	}
}

// A repository choosing OLM v1 (its base branch's smoke.olm) while bot.yaml has no smoke.registry: the
// check ends action_required at once, naming the setting (nothing is built or waited for), not an
// infrastructure error after smoke.timeout; nothing merged.
func TestSmokeOLMv1WithoutRegistryIsActionRequired(t *testing.T) {
	h := newHarness(t, func(h *harness) { h.cfg.Smoke.Kubeconfig = filepath.Join(t.TempDir(), "unused") })
	cr := h.smokePR(33, strings.Replace(smokeRepoConfig, "  enabled: true\n", "  enabled: true\n  olm: v1\n", 1))
	out := cr.Output.Summary + cr.Output.Text
	if cr.Conclusion != "action_required" || !strings.Contains(out, "smoke.registry in bot.yaml") {
		t.Fatalf("check run %s %q:\n%s", cr.Conclusion, cr.Output.Title, out)
	}
	h.requireNotMerged(33, "the OLM v1 smoke install could not run")
}

// smokePR opens pull request n by alice releasing foo on a main branch holding the repository
// configuration cfg, waits for the bot to settle, and returns the last check run.
func (h *harness) smokePR(n int, cfg string) githubtest.CheckRun {
	h.t.Helper()
	main := h.seedMain(cfg)
	head := h.releaseFoo("alice/foo", main, "alice")
	h.openPR(n, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "alice", head, main, nil))
	h.waitIdle()
	return h.lastCheckRun()
}
