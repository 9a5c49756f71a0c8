package ghaction

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// exampleWorkflow is what the runner test reads of a workflow in examples/workflows.
type exampleWorkflow struct {
	On          map[string]any    `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		Steps []struct {
			ID   string            `yaml:"id"`
			Uses string            `yaml:"uses"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// example reads examples/workflows/name and returns it with the `with:` and id of its catalogbot step
// and the outputs of that step its later steps read.
func example(t *testing.T, name string) (wf exampleWorkflow, with map[string]string, reads []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "workflows", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("%s has %d jobs, want 1", name, len(wf.Jobs))
	}
	id := ""
	for _, job := range wf.Jobs {
		for _, s := range job.Steps {
			if strings.HasPrefix(s.Uses, "catalogbot/catalogbot@") {
				id, with = s.ID, s.With
				continue
			}
			if id == "" {
				continue
			}
			re := regexp.MustCompile(`steps\.` + regexp.QuoteMeta(id) + `\.outputs\.([\w-]+)`)
			for _, v := range s.Env {
				for _, m := range re.FindAllStringSubmatch(v, -1) {
					reads = append(reads, m[1])
				}
			}
		}
	}
	if id == "" {
		t.Fatalf("%s has no catalogbot step with an id", name)
	}
	if with == nil {
		with = map[string]string{}
	}
	return wf, with, reads
}

// permits is whether the workflow's token has at least level (read or write) on scope.
func permits(wf exampleWorkflow, scope, level string) bool {
	got := wf.Permissions[scope]
	return got == level || got == "write" && level == "read"
}

// The example workflows, run as the runner runs them: each one's event, permissions and catalogbot
// step's inputs through action.yml, against the fake GitHub and an in-process registry; the outputs its
// later steps read are ones action.yml declares.
func TestExampleWorkflowsRunTheAction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	ctx := context.Background()
	release := releaseServer(t, false)
	const full = "Codertocat/Hello-World"
	run := func(t *testing.T, name, event, payload, dir, api string) map[string]string {
		t.Helper()
		wf, with, reads := example(t, name)
		if _, ok := wf.On[event]; !ok {
			t.Fatalf("%s does not run on %s", name, event)
		}
		r := newRunner(t, release, dir, event, payload, api)
		for k, v := range with {
			r.inputs[k] = v
		}
		outs, err := r.run(ctx)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, r.log.String())
		}
		for _, o := range reads {
			if _, ok := outs[o]; !ok {
				t.Errorf("%s reads output %s, which action.yml does not declare (outputs %v)", name, o, outs)
			}
		}
		return outs
	}

	t.Run("pr-checks.yml", func(t *testing.T) {
		wf, _, _ := example(t, "pr-checks.yml")
		if !permits(wf, "contents", "read") || !permits(wf, "pull-requests", "read") || permits(wf, "contents", "write") {
			t.Fatalf("permissions %v: the checks need contents and pull-requests read, and nothing more", wf.Permissions)
		}
		gh := githubtest.New(t)
		dir, base, head := testRepo(t, "alice")
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", base)
		gh.AddPullRequest(full, githubtest.PullRequest{Number: 7, User: "mallory", HeadSHA: head, BaseRef: "main", BaseSHA: base})
		gh.AddReview(full, 7, githubtest.Review{User: "alice", State: "APPROVED", CommitID: head})
		outs := run(t, "pr-checks.yml", "pull_request", prPayload(t, 7, base, head, "mallory"), dir, gh.URL)
		if outs["verdict"] != "pass" || outs["merged"] != "" {
			t.Fatalf("outputs %v", outs)
		}
		if merged, _ := gh.Merged(full, 7); merged {
			t.Fatal("the checks workflow merged")
		}
	})

	t.Run("merge-on-approval.yml", func(t *testing.T) {
		wf, _, _ := example(t, "merge-on-approval.yml")
		if !permits(wf, "contents", "write") || !permits(wf, "pull-requests", "write") {
			t.Fatalf("permissions %v: merging needs contents and pull-requests write", wf.Permissions)
		}
		gh := githubtest.New(t)
		dir, base, head := testRepo(t, "alice")
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", base)
		gh.AddPullRequest(full, githubtest.PullRequest{Number: 8, User: "mallory", HeadSHA: head, BaseRef: "main", BaseSHA: base})
		gh.AddReview(full, 8, githubtest.Review{User: "alice", State: "APPROVED", CommitID: head})
		outs := run(t, "merge-on-approval.yml", "pull_request_target", prPayload(t, 8, base, head, "mallory"), dir, gh.URL)
		if merged, at := gh.Merged(full, 8); outs["merged"] != "true" || !merged || at != head {
			t.Fatalf("merged %v at %s, outputs %v", merged, at, outs)
		}
	})

	t.Run("release-on-push.yml", func(t *testing.T) {
		wf, with, _ := example(t, "release-on-push.yml")
		if !permits(wf, "packages", "write") || with["release"] != "true" || !strings.Contains(with["github-token"], "steps.app-token.outputs.token") {
			t.Fatalf("permissions %v, with %v: the bundle images need packages write, the pull requests an App's token", wf.Permissions, with)
		}
		w := newReleaseWorld(t, nil, nil)
		outs := run(t, "release-on-push.yml", "push", pushPayload(t, w.before, w.after), w.dir, w.gh.URL)
		if prs := w.releasePRs(); outs["verdict"] != "pass" || len(prs) != 1 || outs["release-prs"] != strconv.Itoa(prs[0].Number) ||
			!strings.HasPrefix(outs["released"], "kube-green 0.7.2 "+w.reg.Host+"/pipeline/kube-green@sha256:") || outs["release-failed"] != "" {
			t.Fatalf("outputs %v, release pull requests %+v", outs, prs)
		}
	})

	t.Run("publish-on-push.yml", func(t *testing.T) {
		wf, _, _ := example(t, "publish-on-push.yml")
		if !permits(wf, "packages", "write") || !permits(wf, "contents", "read") {
			t.Fatalf("permissions %v: publishing to GitHub's registry needs packages write", wf.Permissions)
		}
		gh := githubtest.New(t)
		reg := registrytest.New(t, nil)
		target := reg.Host + "/ops/catalog:latest"
		dir, before, after := publishRepo(t, reg.Host, target)
		gh.AddRepo(full)
		gh.SetRef(full, "heads/main", after)
		outs := run(t, "publish-on-push.yml", "push", pushPayload(t, before, after), dir, gh.URL)
		if outs["verdict"] != "pass" || !strings.Contains(outs["catalog-digest"], "@sha256:") {
			t.Fatalf("outputs %v", outs)
		}
	})
}
