package archtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CI runs .ci/run; README's set-up names the test command. They must be the same command, so what CI
// runs is what README tells a maintainer to run (and a change to one without the other fails here).
func TestCIRunsTheREADMETestCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "## Set-up on a fresh machine: two commands\n\n```sh\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("README has no ```sh block under \"Set-up on a fresh machine: two commands\"")
	}
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 {
		t.Fatalf("README's set-up block has %d commands, want 2 (the main job, the tests): %q", len(cmds), cmds)
	}
	test := cmds[1]
	run, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, l := range strings.Split(string(run), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "set ") || strings.HasPrefix(l, "cd ") {
			continue
		}
		steps = append(steps, l)
	}
	if len(steps) != 1 || steps[0] != test {
		t.Fatalf(".ci/run runs %q; README's test command is %q: CI must run exactly that", steps, test)
	}
}

// A main package's default.pgo is applied by -pgo=auto to every go build, go run, go install and go test of
// it, which compiles every dependency a second time: minutes of a cold CI run and of a pre-commit install.
// The profile is the release's (cmd/catalogbot/release.pgo, applied by hack/release.sh and
// bench/catalogbot.sh), under another name.
func TestNoDefaultProfile(t *testing.T) {
	var found []string
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() == "default.pgo" {
			found = append(found, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) > 0 {
		t.Fatalf("%v: -pgo=auto would build every test and go run with it; name it release.pgo (hack/pgo.sh)", found)
	}
	if _, err := os.Stat("../../cmd/catalogbot/release.pgo"); err != nil {
		t.Fatalf("the release profile: %v", err)
	}
}
