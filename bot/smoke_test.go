package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
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
	main := h.seedMain(smokeRepoConfig)
	head := h.releaseFoo("alice/foo", main, "alice")
	h.openPR(30, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(30, "alice", head, main, nil))
	h.waitIdle()
	cr := h.lastCheckRun()
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
	main := h.seedMain(smokeRepoConfig)
	head := h.releaseFoo("alice/foo", main, "alice")
	h.openPR(31, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(31, "alice", head, main, nil))
	h.waitIdle()
	cr := h.lastCheckRun()
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
		{"olm", SmokeConfig{NodeImage: "n", OLM: "both", OLMv1Manifests: t.TempDir()}, ""},
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
	h := newHarness(t, func(h *harness) {
		h.cfg.Smoke.Kubeconfig, h.cfg.Smoke.OLM, h.cfg.Smoke.OLMv1Manifests = kubeconfig, "v1", manifests
	})
	if in := h.bot.smokeInput(); in.OLM != "v1" || in.OLMv1ManifestsDir != manifests {
		t.Fatalf("smoke input %+v", in)
	}
	main := h.seedMain(smokeRepoConfig)
	head := h.releaseFoo("alice/foo", main, "alice")
	h.openPR(32, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(32, "alice", head, main, nil))
	h.waitIdle()
	cr := h.lastCheckRun()
	out := cr.Output.Summary + cr.Output.Text
	if cr.Conclusion != "failure" || !strings.Contains(out, "OLM v1") || !strings.Contains(out, "clustercatalogs.olm.operatorframework.io") {
		t.Fatalf("check run %s %q:\n%s", cr.Conclusion, cr.Output.Title, out)
	}
	h.requireNotMerged(32, "the smoke install failed")
}
