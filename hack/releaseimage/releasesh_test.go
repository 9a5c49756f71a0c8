package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeGo stands for the go command in release.sh's runs: `go build -o OUT` writes, as the "binary", the
// directory it ran in and every Go file it could compile from there; `go run ... --layout FILE` does the
// same into FILE. The first build also commits a new file to the repository (FAKEGO_COMMIT_TO), as a
// commit landing while a release runs.
const fakeGo = `#!/usr/bin/env bash
set -euo pipefail
tree() { echo "pwd=$PWD"; find . -name '*.go' | LC_ALL=C sort | while read -r f; do echo "== $f"; cat "$f"; done; }
case "$1" in
version) echo "go version fake" ;;
build)
  out=""
  while [ $# -gt 0 ]; do if [ "$1" = -o ]; then out="$2"; fi; shift; done
  tree >"$out"
  if [ ! -e "$FAKEGO_COMMIT_TO/.git/late-done" ]; then
    touch "$FAKEGO_COMMIT_TO/.git/late-done"
    (cd "$FAKEGO_COMMIT_TO" && echo 'package main // COMMITTED DURING THE RUN' >cmd/catalogbot/late.go &&
      git add cmd/catalogbot/late.go && git commit -qm late)
  fi ;;
run)
  layout=""
  while [ $# -gt 0 ]; do if [ "$1" = --layout ]; then layout="$2"; fi; shift; done
  tree >"$layout"
  echo sha256:0000000000000000000000000000000000000000000000000000000000000000 ;;
*) echo "fake go: $*" >&2; exit 1 ;;
esac
`

// releaseRepo is a git repository holding release.sh and a tiny catalogbot, with an untracked Go file in
// the command's package; it returns the repository and the PATH directory holding the fake go.
func releaseRepo(t *testing.T) (repo, bin string) {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("..", "release.sh"))
	if err != nil {
		t.Fatal(err)
	}
	repo, bin = t.TempDir(), t.TempDir()
	files := map[string]string{
		"hack/release.sh":             string(script),
		"go.mod":                      "module example.com/catalogbot\n",
		"cmd/catalogbot/main.go":      "package main // THE COMMITTED PROGRAM\n\nfunc main() {}\n",
		"hack/go.mod":                 "module example.com/catalogbot/hack\n",
		"hack/releaseimage/main.go":   "package main // THE COMMITTED IMAGE BUILDER\n\nfunc main() {}\n",
		"cmd/catalogbot/untracked.go": "package main // UNTRACKED\n",
	}
	for rel, content := range files {
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fakeGo), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", "hack", "go.mod", "cmd/catalogbot/main.go")
	git(t, repo, "commit", "-qm", "release me")
	return repo, bin
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_DIR="+filepath.Join(dir, ".git"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func gitEnv() []string {
	return append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t",
		"GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
}

func runRelease(t *testing.T, repo, bin, dist string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join(repo, "hack", "release.sh"), "v1.2.3")
	cmd.Dir = t.TempDir()
	cmd.Env = append(gitEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DIST="+dist,
		"BASE=scratch", "FAKEGO_COMMIT_TO="+repo, "SOURCE_DATE_EPOCH=")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A release is exactly the commit it names: an untracked file in the work tree (the dirty check ignores
// untracked files) and a commit made while the release runs do not get into any binary or the image, and
// nothing is compiled in the work tree itself.
func TestReleaseBuildsTheCommitOnly(t *testing.T) {
	repo, bin := releaseRepo(t)
	commit := git(t, repo, "rev-parse", "HEAD")
	dist := filepath.Join(t.TempDir(), "dist")
	out, err := runRelease(t, repo, bin, dist)
	if err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	if !strings.Contains(out, "release v1.2.3 of "+commit) {
		t.Errorf("release.sh does not name the commit %s:\n%s", commit, out)
	}
	if git(t, repo, "rev-parse", "HEAD") == commit {
		t.Fatal("the fake go did not commit during the run: the test proves nothing")
	}
	built := []string{"catalogbot_1.2.3_linux_amd64", "catalogbot_1.2.3_linux_arm64", "catalogbot_1.2.3_darwin_amd64",
		"catalogbot_1.2.3_darwin_arm64", "catalogbot_1.2.3_image.tar"}
	for _, f := range built {
		b, err := os.ReadFile(filepath.Join(dist, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		// the binaries are built from the commit's program; the image by the commit's image builder, which
		// runs in the tools module (hack/go.mod)
		want := "THE COMMITTED PROGRAM"
		if strings.HasSuffix(f, "_image.tar") {
			want = "THE COMMITTED IMAGE BUILDER"
		}
		if strings.Contains(s, "UNTRACKED") || strings.Contains(s, "COMMITTED DURING THE RUN") || !strings.Contains(s, want) {
			t.Errorf("%s was not built from commit %s alone:\n%s", f, commit, s)
		}
		if strings.Contains(s, "pwd="+repo+"\n") {
			t.Errorf("%s was built in the work tree %s", f, repo)
		}
	}
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range built {
		if !strings.Contains(string(sums), "  "+f+"\n") {
			t.Errorf("SHA256SUMS lacks %s:\n%s", f, sums)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(os.TempDir(), "catalogbot-release-src.*"))
	for _, l := range leftovers {
		if b, err := os.ReadFile(filepath.Join(l, "cmd", "catalogbot", "main.go")); err == nil && strings.Contains(string(b), "THE COMMITTED PROGRAM") {
			t.Errorf("the exported source %s was left behind", l)
		}
	}

	// The release creates the tag it names, at the commit it built; a second release of the same version
	// from another commit is refused before anything is built.
	if tagged := git(t, repo, "rev-parse", "v1.2.3^{commit}"); tagged != commit {
		t.Errorf("tag v1.2.3 names %s, want the released commit %s", tagged, commit)
	}
	if out, err := runRelease(t, repo, bin, filepath.Join(t.TempDir(), "dist")); err == nil || !strings.Contains(out, "already names commit "+commit) {
		t.Errorf("v1.2.3 again from %s: err = %v\n%s", git(t, repo, "rev-parse", "HEAD"), err, out)
	}

	// A change to a tracked file is refused: the release would not be what the commit holds.
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module example.com/changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runRelease(t, repo, bin, filepath.Join(t.TempDir(), "dist")); err == nil || !strings.Contains(out, "uncommitted changes") {
		t.Errorf("a release of a modified work tree: err = %v\n%s", err, out)
	}
}
