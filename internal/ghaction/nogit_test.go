package ghaction

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// releaseBinary writes the catalogbot releaseServer serves (built from this tree as the release builds
// it) into a directory of its own and returns its path.
func releaseBinary(t *testing.T) string {
	t.Helper()
	releaseServer(t, false)
	bin := filepath.Join(t.TempDir(), "catalogbot")
	if err := os.WriteFile(bin, built.data, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// runNoGit runs bin with args in dir, with env and a PATH that holds no git (as in the distroless release
// image), and returns its exit code and output.
func runNoGit(t *testing.T, bin, dir string, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}, env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	if strings.Contains(string(out), "executable file not found") {
		t.Errorf("%v looked for an executable:\n%s", args, out)
	}
	return code, string(out)
}

// The release binary's pr, publish and action (a pull request checked, then a push published, against
// the fake GitHub and an in-process registry) need no git executable: PATH holds none.
func TestReleaseBinaryWithoutGit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds catalogbot")
	}
	bin := releaseBinary(t)
	reg := registrytest.New(t, nil)

	t.Run("pr", func(t *testing.T) {
		dir, base, head := testRepo(t, "alice")
		code, out := runNoGit(t, bin, dir, nil, "pr", "--repo", dir, "--base", base, "--head", head, "--author", "alice", "--skip-images")
		if code != 0 || !strings.Contains(out, "verdict: pass") {
			t.Fatalf("pr without git: exit %d\n%s", code, out)
		}
	})

	t.Run("publish", func(t *testing.T) {
		dir, _, _ := testRepo(t, "alice")
		target := reg.Host + "/ops/dir-catalog:v1"
		code, out := runNoGit(t, bin, dir, nil, "publish", "--base", pushStandInBase(t, reg.Host), filepath.Join(dir, "catalog"), target)
		if code != 0 || !strings.Contains(out, "sha256:") {
			t.Fatalf("publish without git: exit %d\n%s", code, out)
		}
	})

	t.Run("action", func(t *testing.T) {
		const full = "Codertocat/Hello-World"
		gh := githubtest.New(t)
		gh.AddRepo(full)
		action := func(dir, event, payload string) (int, map[string]string, string) {
			output := filepath.Join(t.TempDir(), "output")
			env := []string{"GITHUB_EVENT_NAME=" + event, "GITHUB_EVENT_PATH=" + payload, "GITHUB_WORKSPACE=" + dir,
				"GITHUB_API_URL=" + gh.URL, "GITHUB_ACTIONS=true", "GITHUB_OUTPUT=" + output,
				"GITHUB_STEP_SUMMARY=" + filepath.Join(t.TempDir(), "summary.md"), "CATALOGBOT_GITHUB_TOKEN=ghs_workflowtoken"}
			code, out := runNoGit(t, bin, dir, env, "action", "--repo", dir, "--skip-images")
			return code, readOutputs(t, output), out
		}
		dir, base, head := testRepo(t, "alice")
		gh.SetRef(full, "heads/main", base)
		gh.AddPullRequest(full, githubtest.PullRequest{Number: 5, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: base})
		if code, outs, log := action(dir, "pull_request", prPayload(t, 5, base, head, "alice")); code != 0 || outs["verdict"] != "pass" {
			t.Fatalf("pull_request without git: exit %d, outputs %v\n%s", code, outs, log)
		}
		target := reg.Host + "/ops/catalog:latest"
		dir, before, after := publishRepo(t, reg.Host, target)
		gh.SetRef(full, "heads/main", after)
		code, outs, log := action(dir, "push", pushPayload(t, before, after))
		if code != 0 || outs["verdict"] != "pass" || !strings.Contains(outs["catalog_digest"], "@sha256:") {
			t.Fatalf("push without git: exit %d, outputs %v\n%s", code, outs, log)
		}
	})
}
