// Package gittest builds git repositories for the bot's tests with the git CLI, at fixed dates so commit
// SHAs are the same on every run. The repository stands in for GitHub's git service: the bot fetches from
// its path, including the refs/pull/N/head refs GitHub keeps for pull requests.
package gittest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Repo is a work-tree repository used as a git remote.
type Repo struct {
	Dir  string
	t    testing.TB
	when time.Time
}

// New creates an empty repository whose default branch is main.
func New(t testing.TB) *Repo {
	t.Helper()
	r := &Repo{Dir: filepath.Join(t.TempDir(), "remote"), t: t, when: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r.Git("init", "-q", "-b", "main")
	return r
}

// Git runs git in the repository and returns its trimmed output.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	return r.gitEnv(nil, args...)
}

func (r *Repo) gitEnv(env []string, args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// symlinkPrefix marks a Commit value that is a symbolic link's target (Symlink), not file content.
const symlinkPrefix = "\x00symlink\x00"

// Symlink is a Commit value that makes the path a symbolic link to target (git mode 120000).
func Symlink(target string) string { return symlinkPrefix + target }

// Commit checks out branch at parent (a SHA or branch; "" for the branch's current tip, or an orphan
// branch when it does not exist), applies files (an empty value deletes the file, a Symlink value makes a
// symbolic link), commits as author and returns the new SHA.
func (r *Repo) Commit(branch, parent, author, msg string, files map[string]string) string {
	r.t.Helper()
	switch {
	case parent != "":
		r.Git("checkout", "-q", "-B", branch, parent)
	case r.exists("refs/heads/" + branch):
		r.Git("checkout", "-q", branch)
	default:
		r.Git("checkout", "-q", "--orphan", branch)
	}
	for rel, data := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(rel))
		if data == "" {
			if err := os.Remove(p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(data, symlinkPrefix); ok {
			if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
				r.t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				r.t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.Git("add", "-A")
	r.when = r.when.Add(time.Minute)
	date := r.when.Format(time.RFC3339)
	r.gitEnv([]string{
		"GIT_AUTHOR_NAME=" + author, "GIT_AUTHOR_EMAIL=" + author + "@users.noreply.example.com", "GIT_AUTHOR_DATE=" + date,
		"GIT_COMMITTER_NAME=" + author, "GIT_COMMITTER_EMAIL=" + author + "@users.noreply.example.com", "GIT_COMMITTER_DATE=" + date,
	}, "commit", "-q", "--allow-empty", "-m", msg)
	return r.Git("rev-parse", "HEAD")
}

func (r *Repo) exists(ref string) bool {
	cmd := exec.Command("git", "rev-parse", "--verify", "-q", ref)
	cmd.Dir = r.Dir
	return cmd.Run() == nil
}

// SetPull points refs/pull/N/head at sha, as GitHub does for pull request N.
func (r *Repo) SetPull(n int, sha string) {
	r.t.Helper()
	r.Git("update-ref", fmt.Sprintf("refs/pull/%d/head", n), sha)
}

// SetBranch points refs/heads/branch at sha.
func (r *Repo) SetBranch(branch, sha string) {
	r.t.Helper()
	r.Git("update-ref", "refs/heads/"+branch, sha)
}
