package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// heavy are the libraries whose package initialisers cost every run of a binary that links them ~25-30 MB
// of start-up RSS (client-go and kind for smoke, the bot's GitHub, SQL and metrics clients), and the
// packages of ours that bring them in. The lean build (go install's default, the pre-commit hook's) must link
// none of them: validate's memory target (a quarter of opm's peak RSS) does not leave room for them.
var heavy = []string{
	"k8s.io/client-go/",
	// the Kubernetes and OLM API types: render/bundle decodes into generated copies of them
	// (render/bundle/internal/kubetypes), which cost a fraction of their start-up
	"k8s.io/api/",
	"k8s.io/apiextensions-apiserver/",
	"k8s.io/apimachinery/pkg/apis/",
	"github.com/operator-framework/api/pkg/operators",
	"sigs.k8s.io/kind/",
	"github.com/google/go-github/",
	"modernc.org/sqlite",
	"github.com/jackc/pgx/",
	"github.com/prometheus/client_golang/",
	"github.com/catalogbot/catalogbot/bot",
	"github.com/catalogbot/catalogbot/pipeline",
	"github.com/catalogbot/catalogbot/checks/smoke",
}

func deps(t *testing.T, tags string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", tags, "./cmd/catalogbot")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -tags %q ./cmd/catalogbot: %v", tags, err)
	}
	return strings.Fields(string(out))
}

func heavyIn(pkgs []string) []string {
	var found []string
	for _, p := range pkgs {
		for _, h := range heavy {
			if p == h || strings.HasPrefix(p, h) {
				found = append(found, p)
				break
			}
		}
	}
	return found
}

// A verb file of cmd/catalogbot that imports the bot, the pipeline or smoke without the `full || tools` build
// tag (or a light package that starts importing one of them) puts the heavy libraries back into the lean
// build: this test names them.
func TestLeanBuildLinksNoHeavyLibrary(t *testing.T) {
	if found := heavyIn(deps(t, "")); len(found) > 0 {
		t.Fatalf("the lean catalogbot (go install ./...) links %d heavy packages, e.g. %v; tag the verb file that "+
			"imports them `//go:build full || tools` and give it a stub in cmd/catalogbot/lean.go", len(found), found[:min(5, len(found))])
	}
	// the check above is only worth something if the full build does link them
	if found := heavyIn(deps(t, "full")); len(found) == 0 {
		t.Fatal("the full build links none of the heavy packages: the list above is stale")
	}
}

// The lean build's full-only verbs run catalogbot-full beside it with the same arguments and exit with its
// exit code; without one they exit 2 and say how to get it.
func TestLeanBuildRunsTheFullBuild(t *testing.T) {
	dir := t.TempDir()
	lean := filepath.Join(dir, "catalogbot")
	build := exec.Command("go", "build", "-o", lean, "./cmd/catalogbot")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := func(args ...string) (string, int) {
		var stderr bytes.Buffer
		cmd := exec.Command(lean, args...)
		cmd.Stderr = &stderr
		cmd.Env = append(os.Environ(), "PATH="+dir) // no catalogbot-full on PATH but what the test puts there
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return stderr.String(), ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return stderr.String(), 0
	}
	if msg, code := run("serve", "--check"); code != 2 || !strings.Contains(msg, "go build -tags full -o catalogbot-full") {
		t.Fatalf("serve without the full build: exit %d, %q; want exit 2 and how to build catalogbot-full", code, msg)
	}
	// a stand-in full build: prints its arguments and exits 7
	full := filepath.Join(dir, "catalogbot-full")
	if err := os.WriteFile(full, []byte("#!/bin/sh\necho \"full: $*\" >&2\nexit 7\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if msg, code := run("pr", "--base", "main", "--repo", "x y"); code != 7 || msg != "full: pr --base main --repo x y\n" {
		t.Fatalf("pr with catalogbot-full beside: exit %d, %q; want exit 7 and the arguments passed through", code, msg)
	}
}
