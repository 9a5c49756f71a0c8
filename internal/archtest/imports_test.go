// Package archtest enforces the layering rules of ARCHITECTURE.md: the domain packages (catalog, checks,
// render, build) never depend on GitHub code or on the bot, and libraries never depend on the CLI.
package archtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/catalogbot/catalogbot"

func TestDomainPackagesDoNotImportGitHubOrBot(t *testing.T) {
	forbidden := []string{
		"github.com/google/go-github/",
		"github.com/bradleyfalzon/ghinstallation",
		"github.com/gofri/go-github-ratelimit",
		module + "/bot",
		module + "/cmd/",
		module + "/internal/githubtest",
	}
	for _, pattern := range []string{"./catalog/...", "./checks/...", "./render/...", "./build/..."} {
		for pkg, deps := range depsOf(t, pattern) {
			for _, dep := range deps {
				for _, f := range forbidden {
					if strings.HasPrefix(dep, f) || dep == strings.TrimSuffix(f, "/") {
						t.Errorf("%s depends on %s: domain packages must not import GitHub or bot code", pkg, dep)
					}
				}
			}
		}
	}
}

// depsOf maps each package matched by pattern to its transitive imports (test files excluded).
func depsOf(t *testing.T, pattern string) map[string][]string {
	t.Helper()
	if _, err := os.Stat(filepath.Join("../..", strings.TrimSuffix(pattern, "/..."))); err != nil {
		return nil // the layer does not exist (yet): nothing to check
	}
	cmd := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", pattern)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pattern, err, stderr.String())
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		fields := strings.Fields(line)
		m[fields[0]] = fields[1:]
	}
	return m
}
