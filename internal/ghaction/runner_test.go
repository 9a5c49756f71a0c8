package ghaction

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
)

// runner runs action.yml's composite steps the way the Actions runner does: `if:` conditions, `${{ }}`
// expressions from inputs, github and earlier steps' outputs, a fresh GITHUB_OUTPUT file per step whose
// outputs become steps.<id>.outputs, the job's GITHUB_STEP_SUMMARY, env and working-directory, bash for
// `shell: bash`. A `uses:` step (actions/setup-go, actions/cache) is not run: the test machine has Go,
// which is what the one installs, and the other only saves time.
type runner struct {
	t          *testing.T
	actionPath string
	inputs     map[string]string
	github     map[string]string // github.* context
	env        map[string]string // the job's environment (GITHUB_*, RUNNER_*)
	steps      map[string]map[string]string
	failed     bool // a step failed: only steps whose if: asks for failure() or always() run on
	skipped    []string
	log        strings.Builder
}

type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID               string            `yaml:"id"`
			Name             string            `yaml:"name"`
			If               string            `yaml:"if"`
			Uses             string            `yaml:"uses"`
			Run              string            `yaml:"run"`
			Shell            string            `yaml:"shell"`
			Env              map[string]string `yaml:"env"`
			WorkingDirectory string            `yaml:"working-directory"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

var exprRe = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

func (r *runner) eval(expr string) string {
	r.t.Helper()
	if alts := strings.Split(expr, "||"); len(alts) > 1 { // the first operand that is not empty
		for _, a := range alts {
			if v := r.eval(strings.TrimSpace(a)); v != "" {
				return v
			}
		}
		return ""
	}
	parts := strings.Split(expr, ".")
	switch {
	case len(parts) == 2 && parts[0] == "inputs":
		return r.inputs[parts[1]]
	case len(parts) == 2 && parts[0] == "github":
		v, ok := r.github[parts[1]]
		if !ok {
			r.t.Fatalf("action.yml uses github.%s, which the test runner does not provide", parts[1])
		}
		return v
	case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
		return r.steps[parts[1]][parts[3]]
	}
	r.t.Fatalf("action.yml expression %q is not one the test runner evaluates", expr)
	return ""
}

func (r *runner) expand(s string) string {
	return exprRe.ReplaceAllStringFunc(s, func(m string) string { return r.eval(exprRe.FindStringSubmatch(m)[1]) })
}

var condRe = regexp.MustCompile(`^(\S+)\s*(==|!=)\s*'([^']*)'$`)

// cond evaluates an if: of ORs of ANDs of comparisons and status functions; without a status function
// it holds only while no step failed (the runner's implicit success()).
func (r *runner) cond(s string) bool {
	r.t.Helper()
	if !strings.Contains(s, "()") && r.failed {
		return false
	}
	if s == "" {
		return true
	}
	term := func(t string) bool {
		switch t {
		case "failure()":
			return r.failed
		case "success()":
			return !r.failed
		case "always()":
			return true
		}
		m := condRe.FindStringSubmatch(t)
		if m == nil {
			r.t.Fatalf("if: %q is not a condition the test runner evaluates", s)
		}
		return (r.eval(m[1]) == m[3]) == (m[2] == "==")
	}
	for _, alt := range strings.Split(s, "||") {
		all := true
		for _, t := range strings.Split(alt, "&&") {
			all = all && term(strings.TrimSpace(t))
		}
		if all {
			return true
		}
	}
	return false
}

// run runs every step and returns the action's outputs; a failing step fails the run (err).
func (r *runner) run(ctx context.Context) (map[string]string, error) {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(r.actionPath, "action.yml"))
	if err != nil {
		r.t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		r.t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		r.t.Fatalf("action.yml runs using %q", a.Runs.Using)
	}
	for k, in := range a.Inputs {
		if _, ok := r.inputs[k]; !ok {
			r.inputs[k] = r.expand(in.Default)
		}
	}
	r.steps = map[string]map[string]string{}
	var failed error
	for i, s := range a.Runs.Steps {
		if !r.cond(s.If) {
			continue
		}
		if s.Uses != "" {
			if !strings.HasPrefix(s.Uses, "actions/setup-go@") && !strings.HasPrefix(s.Uses, "actions/cache@") {
				r.t.Fatalf("step %d uses %s, which the test runner cannot stand in for", i, s.Uses)
			}
			r.skipped = append(r.skipped, s.Uses)
			continue
		}
		if s.Shell != "bash" {
			r.t.Fatalf("step %q: shell %q", s.Name, s.Shell)
		}
		out := filepath.Join(r.env["RUNNER_TEMP"], fmt.Sprintf("output-%d", i))
		if err := os.WriteFile(out, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
		script := filepath.Join(r.env["RUNNER_TEMP"], fmt.Sprintf("step-%d.sh", i))
		if err := os.WriteFile(script, []byte(r.expand(s.Run)), 0o644); err != nil {
			r.t.Fatal(err)
		}
		// The runner's own shell invocation for bash.
		cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.env["GITHUB_WORKSPACE"]
		if s.WorkingDirectory != "" {
			cmd.Dir = r.expand(s.WorkingDirectory)
		}
		cmd.Env = os.Environ()
		for k, v := range r.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+r.expand(v))
		}
		cmd.Env = append(cmd.Env, "GITHUB_OUTPUT="+out)
		b, err := cmd.CombinedOutput()
		fmt.Fprintf(&r.log, "== %s\n%s", s.Name, b)
		if s.ID != "" {
			r.steps[s.ID] = readOutputs(r.t, out)
		}
		if err != nil && failed == nil {
			// A failing step fails the job (later steps run only if they ask for failure() or always());
			// the outputs it wrote are still the action's.
			failed, r.failed = fmt.Errorf("step %q: %w", s.Name, err), true
		}
	}
	return r.outputs(a), failed
}

func (r *runner) outputs(a actionFile) map[string]string {
	outs := map[string]string{}
	for k, o := range a.Outputs {
		outs[k] = r.expand(o.Value)
	}
	return outs
}

// readOutputs parses a GITHUB_OUTPUT file: name=value lines and name<<DELIM blocks.
func readOutputs(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(k, "=") {
			var val []string
			for sc.Scan() && sc.Text() != delim {
				val = append(val, sc.Text())
			}
			out[k] = strings.Join(val, "\n")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out
}

// newRunner is one job running the action at release tag testRef, whose release is served at releaseURL.
func newRunner(t *testing.T, releaseURL, workspace, event, eventPath, apiURL string) *runner {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	summary := filepath.Join(t.TempDir(), "step_summary.md")
	return &runner{t: t, actionPath: root, inputs: map[string]string{"skip-images": "true"},
		github: map[string]string{"action_path": root, "action_ref": testRef, "action_repository": "catalogbot/catalogbot", "token": "ghs_workflowtoken"},
		env: map[string]string{
			"GITHUB_EVENT_NAME": event, "GITHUB_EVENT_PATH": eventPath, "GITHUB_WORKSPACE": workspace,
			"GITHUB_API_URL": apiURL, "GITHUB_SERVER_URL": "http://127.0.0.1:1", "GITHUB_STEP_SUMMARY": summary,
			"GITHUB_ACTIONS": "true", "RUNNER_TEMP": t.TempDir(), "RUNNER_OS": "Linux", "RUNNER_ARCH": "X64",
			"CATALOGBOT_RELEASE_URL": releaseURL,
		}}
}

const testRef = "v0.0.1"

// built is catalogbot built once per test binary for the release server.
var built struct {
	sync.Once
	data []byte
	err  error
}

// releaseServer serves a release of testRef as GitHub's release downloads do: the linux/amd64 binary
// (catalogbot built from this tree) and SHA256SUMS; tamper makes the checksum file disagree.
func releaseServer(t *testing.T, tamper bool) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the test runner claims a linux/amd64 runner")
	}
	built.Do(func() {
		dir, err := os.MkdirTemp("", "catalogbot-action-test-")
		if err != nil {
			built.err = err
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "catalogbot")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/catalogbot")
		cmd.Dir = "../.."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("build catalogbot: %w\n%s", err, out)
			return
		}
		built.data, built.err = os.ReadFile(bin)
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	data := built.data
	file := "catalogbot_" + strings.TrimPrefix(testRef, "v") + "_linux_amd64"
	sum := sha256.Sum256(data)
	if tamper {
		sum[0] ^= 1
	}
	sums := fmt.Sprintf("%x  %s\n%x  catalogbot_0.0.1_darwin_arm64\n", sum, file, sha256.Sum256(nil))
	mux := http.NewServeMux()
	mux.HandleFunc("/"+testRef+"/"+file, func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
	mux.HandleFunc("/"+testRef+"/SHA256SUMS", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, sums) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestActionYAMLAsTheRunnerRunsIt runs action.yml for a pull_request (the approvals read from the fake
// GitHub decide the owners stage, and the pull request merges) and for a push to main (the catalog is
// published to an in-process registry), from GitHub's real payloads.
func TestActionYAMLAsTheRunnerRunsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	ctx := context.Background()
	release := releaseServer(t, false)
	const full = "Codertocat/Hello-World"

	t.Run("pull_request", func(t *testing.T) {
		gh := githubtest.New(t)
		dir, base, head := testRepo(t, "alice")
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", base)
		pr := func(n int) string {
			gh.AddPullRequest(full, githubtest.PullRequest{Number: n, User: "mallory", HeadSHA: head, BaseRef: "main", BaseSHA: base})
			return prPayload(t, n, base, head, "mallory")
		}
		// alice (the owner) approved an earlier head: that approval does not count for this one.
		stale := pr(2)
		gh.AddReview(full, 2, githubtest.Review{User: "alice", State: "APPROVED", CommitID: base})
		r := newRunner(t, release, dir, "pull_request", stale, gh.URL)
		r.inputs["merge"] = "true"
		outs, err := r.run(ctx)
		if err == nil || !strings.Contains(err.Error(), `step "Run catalogbot"`) {
			t.Fatalf("a failing verdict did not fail the step: %v\n%s", err, r.log.String())
		}
		if outs["verdict"] != "fail" || outs["merged"] != "false" || outs["head-sha"] != head {
			t.Fatalf("with a stale approval: outputs %v\n%s", outs, r.log.String())
		}
		if merged, _ := gh.Merged(full, 2); merged {
			t.Fatal("merged on a stale approval")
		}
		// alice approves the head itself: the checks pass and the pull request merges at that head.
		fresh := pr(3)
		gh.AddReview(full, 3, githubtest.Review{User: "alice", State: "APPROVED", CommitID: head})
		r = newRunner(t, release, dir, "pull_request_target", fresh, gh.URL)
		r.inputs["merge"] = "true"
		if outs, err = r.run(ctx); err != nil {
			t.Fatalf("%v\n%s", err, r.log.String())
		}
		if outs["verdict"] != "pass" || outs["merged"] != "true" || outs["merge-sha"] == "" {
			t.Fatalf("with the owner's approval on the head: outputs %v\n%s", outs, r.log.String())
		}
		if merged, at := gh.Merged(full, 3); !merged || at != head {
			t.Fatalf("merged %v at %s, want %s", merged, at, head)
		}
		summary, _ := os.ReadFile(r.env["GITHUB_STEP_SUMMARY"])
		if !strings.Contains(string(summary), "catalogbot: pass") || !strings.Contains(string(summary), "merged") {
			t.Errorf("step summary:\n%s", summary)
		}
		if r.steps["get"]["found"] != "true" || len(r.skipped) != 0 || !strings.Contains(r.log.String(), "using the released catalogbot_0.0.1_linux_amd64") {
			t.Errorf("the released binary was not used (skipped %v):\n%s", r.skipped, r.log.String())
		}
	})

	// smoke.enabled in the base configuration: without the smoke input the run cannot judge the change
	// (action_required); with it, OLM's pinned manifests are fetched and the smoke stage creates a kind
	// cluster with the node image the inputs give (here one that cannot be pulled: an infrastructure error
	// naming it).
	t.Run("smoke", func(t *testing.T) {
		gh := githubtest.New(t)
		reg := registrytest.New(t, nil)
		dir, base, head := testRepo(t, "alice", "publish:\n  base: "+pushStandInBase(t, reg.Host)+"\nsmoke:\n  enabled: true\n")
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", base)
		gh.AddPullRequest(full, githubtest.PullRequest{Number: 4, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: base})
		event := prPayload(t, 4, base, head, "alice")
		r := newRunner(t, release, dir, "pull_request", event, gh.URL)
		outs, _ := r.run(ctx)
		if outs["verdict"] != "action_required" || !strings.Contains(r.log.String(), "no cluster settings") {
			t.Fatalf("smoke.enabled without the smoke input: outputs %v\n%s", outs, r.log.String())
		}
		if _, ran := r.steps["olm"]; ran {
			t.Fatalf("OLM's manifests were fetched without the smoke input")
		}
		r = newRunner(t, release, dir, "pull_request", event, gh.URL)
		r.inputs["smoke"] = "true"
		// A node image no registry serves: the cluster cannot be created, whether or not this machine
		// runs a container engine, and nothing is left behind.
		const node = "127.0.0.1:1/no/node@sha256:0000000000000000000000000000000000000000000000000000000000000000"
		r.inputs["smoke-node-images"] = "v1.33.13=" + node + "\n"
		r.env["CATALOGBOT_OLM_CACHE"] = t.TempDir()
		outs, _ = r.run(ctx)
		olm := r.steps["olm"]["dir"]
		for _, f := range []string{"crds.yaml", "olm.yaml"} {
			if fi, err := os.Stat(filepath.Join(olm, f)); err != nil || fi.Size() == 0 {
				t.Fatalf("OLM manifest %s not fetched into %q: %v\n%s", f, olm, err, r.log.String())
			}
		}
		if outs["verdict"] != "error" || !strings.Contains(r.log.String(), "127.0.0.1:1/no/node") {
			t.Fatalf("smoke against a cluster that does not answer: outputs %v\n%s", outs, r.log.String())
		}
		// smoke-olm and smoke-olmv1-manifests reach the smoke stage: its install is an OLM v1 one
		r = newRunner(t, release, dir, "pull_request", event, gh.URL)
		r.inputs["smoke"], r.inputs["smoke-node-images"] = "true", "v1.33.13="+node+"\n"
		r.inputs["smoke-olm"], r.inputs["smoke-olmv1-manifests"] = "v1", t.TempDir()
		r.env["CATALOGBOT_OLM_CACHE"] = t.TempDir()
		outs, _ = r.run(ctx)
		if outs["verdict"] != "error" || !strings.Contains(r.log.String(), "(OLM v1, Kubernetes") {
			t.Fatalf("smoke with OLM v1: outputs %v\n%s", outs, r.log.String())
		}
	})

	t.Run("push", func(t *testing.T) {
		gh := githubtest.New(t)
		reg := registrytest.New(t, nil)
		target := reg.Host + "/ops/catalog:latest"
		dir, before, after := publishRepo(t, reg.Host, target)
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", after)
		event := pushPayload(t, before, after)
		r := newRunner(t, release, dir, "push", event, gh.URL)
		outs, err := r.run(ctx)
		if err != nil {
			t.Fatalf("%v\n%s", err, r.log.String())
		}
		ref, _ := name.ParseReference(target, name.Insecure)
		desc, err := remote.Head(ref)
		if err != nil {
			t.Fatalf("%s was not published: %v\n%s", target, err, r.log.String())
		}
		if outs["verdict"] != "pass" || !strings.HasSuffix(outs["catalog-digest"], "@"+desc.Digest.String()) {
			t.Fatalf("outputs %v, tag at %s\n%s", outs, desc.Digest, r.log.String())
		}
		if outs["catalog_digest"] != outs["catalog-digest"] || outs["head_sha"] != outs["head-sha"] || outs["head-sha"] != after {
			t.Errorf("the deprecated output names do not give the new ones' values: %v", outs)
		}
		if rev, _, err := pipeline.TagRevision(ctx, target, build.Options{}); err != nil || rev != after {
			t.Fatalf("%s records %q (%v), want %s", target, rev, err, after)
		}
		// The same push delivered again (a re-run) finds the tag already holding it: nothing to publish.
		if outs, err = newRunner(t, release, dir, "push", event, gh.URL).run(ctx); err != nil {
			t.Fatal(err)
		}
		if outs["catalog-digest"] != "" || outs["verdict"] != "pass" {
			t.Fatalf("re-run outputs %v", outs)
		}
		// An older push run late (main is at after): not published, the tag stays.
		old := pushPayload(t, strings.Repeat("0", 40), before)
		if outs, err = newRunner(t, release, dir, "push", old, gh.URL).run(ctx); err != nil {
			t.Fatal(err)
		}
		if d, _ := remote.Head(ref); outs["catalog-digest"] != "" || d.Digest != desc.Digest {
			t.Fatalf("late push: outputs %v, tag at %s", outs, d.Digest)
		}
	})
}

// pushStandInBase pushes an empty linux/amd64 image as host/ops/opm-base:v1, a base for catalog images
// that needs no network.
func pushStandInBase(t *testing.T, host string) string {
	t.Helper()
	img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), &v1.ConfigFile{OS: runtime.GOOS, Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	baseTag, _ := name.NewTag(host+"/ops/opm-base:v1", name.Insecure)
	if err := remote.Write(baseTag, img); err != nil {
		t.Fatal(err)
	}
	return baseTag.String()
}

// prPayload is GitHub's pull_request opened example for pull request n by login, from base to head.
func prPayload(t *testing.T, n int, base, head, login string) string {
	return githubtest.PayloadFile(t, "pull_request/opened.payload.json", map[string]any{"number": n, "pull_request.number": n,
		"pull_request.base.sha": base, "pull_request.base.ref": "main", "pull_request.head.sha": head, "pull_request.user.login": login})
}

// pushPayload is GitHub's push example for a push to main, the default branch, from before to after.
func pushPayload(t *testing.T, before, after string) string {
	return githubtest.PayloadFile(t, "push/payload.json", map[string]any{"deleted": false, "created": false,
		"ref": "refs/heads/main", "before": before, "after": after, "repository.default_branch": "main"})
}

// publishRepo makes a repository whose main went before (foo 0.1.0) → after (foo 0.2.0), configured to
// publish to target on a stand-in opm base image pushed to host.
func publishRepo(t *testing.T, host, target string) (dir, before, after string) {
	t.Helper()
	baseTag := pushStandInBase(t, host)
	dir = t.TempDir()
	g := newTestGit(t, dir, "main")
	commit := func(files map[string]string) string { return g.commit("admin", files) }
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\npublish:\n  image: " + target + "\n  base: " + baseTag + "\n"
	before = commit(map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": catalogV1})
	after = commit(map[string]string{"catalog/foo/catalog.json": catalogV2})
	return dir, before, after
}

// A release binary whose checksum does not match is never run, and the action does not fall back to
// building: the job fails on the get step.
func TestActionYAMLRefusesATamperedReleaseBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	release := releaseServer(t, true)
	dir, base, head := testRepo(t, "alice")
	r := newRunner(t, release, dir, "pull_request", prPayload(t, 1, base, head, "alice"), "http://127.0.0.1:1")
	outs, err := r.run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "Get the released catalogbot") || !strings.Contains(r.log.String(), "does not match") {
		t.Fatalf("err %v\n%s", err, r.log.String())
	}
	if _, err := os.Stat(filepath.Join(r.env["RUNNER_TEMP"], "catalogbot")); err == nil {
		t.Fatal("the tampered binary was installed")
	}
	// The job still says so to what reads the outputs and the summary.
	if outs["verdict"] != "error" {
		t.Errorf("outputs %v, want verdict=error", outs)
	}
	if summary, _ := os.ReadFile(r.env["GITHUB_STEP_SUMMARY"]); !strings.Contains(string(summary), "catalogbot: error") {
		t.Errorf("step summary:\n%s", summary)
	}
}

// olm-version names a directory of the cache: a value that is not exactly vX.Y.Z (a path leaving the
// cache, a moving name) is refused before anything is fetched or written.
func TestActionOLMRefusesBadVersions(t *testing.T) {
	for _, v := range []string{"v0.33.0/../../../tmp/x", "latest", "v0.33", "0.33.0", "v0.33.0\nv0.34.0"} {
		cache := t.TempDir()
		cmd := exec.Command("bash", "../../hack/action-olm.sh")
		cmd.Env = append(os.Environ(), "OLM_VERSION="+v, "CATALOGBOT_OLM_CACHE="+cache, "GITHUB_OUTPUT="+filepath.Join(t.TempDir(), "out"))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "is not a release version") {
			t.Errorf("olm-version %q: err %v, output %s", v, err, out)
		}
		if entries, _ := os.ReadDir(cache); len(entries) != 0 {
			t.Errorf("olm-version %q wrote into the cache: %v", v, entries)
		}
	}
}
