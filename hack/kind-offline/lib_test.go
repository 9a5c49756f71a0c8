package kindoffline_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaneIgnoresCallersWorkspace runs lib.sh's two go settings under each environment a caller gives the
// lane: hack/test.sh runs it with GOWORK=hack/go.work (CI), a maintainer by hand with nothing set or with
// GOWORK=off. A throwaway module must build outside any workspace with -mod=mod (build-k8s.sh,
// build-binaries.sh, build-olmv1.sh do that), and ko_repo_go must build the lane's own commands from the
// repository root, which only the workspace holding both modules can. Under CI's GOWORK the first half
// once failed ("-mod may only be set to readonly or vendor when in workspace mode") and the lane's cache
// never built on a fresh machine.
func TestLaneIgnoresCallersWorkspace(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Clean(filepath.Join(here, "..", ".."))
	mod := t.TempDir()
	write(t, filepath.Join(mod, "go.mod"), "module catalogbot.local/throwaway\n\ngo 1.24\n")
	write(t, filepath.Join(mod, "main.go"), "package main\n\nfunc main() {}\n")
	script := `set -euo pipefail
source "$REPO/hack/kind-offline/lib.sh"
(cd "$MOD" && go build -o /dev/null .)
echo "external GOWORK=$(cd "$MOD" && go env GOWORK)"
ko_repo_go list -tags tools ./hack/kind-offline/cmd/grpchealthprobe
echo "repository GOWORK=$(ko_repo_go env GOWORK)"
`
	for name, env := range map[string][]string{
		"ci workspace": {"GOWORK=" + filepath.Join(repo, "hack", "go.work")},
		"nothing set":  {},
		"gowork off":   {"GOWORK=off"},
		"readonly":     {"GOFLAGS=-mod=readonly"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", script)
			cmd.Env = append(baseEnv(), append(env, "REPO="+repo, "MOD="+mod, "KO_CACHE="+t.TempDir())...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("lane go settings under %v: %v\n%s", env, err, out)
			}
			for _, want := range []string{
				"external GOWORK=off",
				"github.com/catalogbot/catalogbot/hack/kind-offline/cmd/grpchealthprobe",
				"repository GOWORK=" + filepath.Join(repo, "hack", "go.work"),
			} {
				if !strings.Contains(string(out), want) {
					t.Errorf("under %v: output lacks %q:\n%s", env, want, out)
				}
			}
		})
	}
}

// baseEnv is the test's environment without the go settings each case sets itself.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOWORK=") || strings.HasPrefix(kv, "GOFLAGS=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
