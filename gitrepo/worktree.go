package gitrepo

// The git CLI does one thing much faster than go-git on catalog-sized trees: diffs of the work tree and
// its index against a revision (validate --staged and --changed-since, what pre-commit runs). These run
// it. Everything else uses go-git, so pr, publish, action and the bot need no git executable.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/catalogbot/catalogbot/diag"
)

// Run runs git in dir and returns its standard output; errors carry git's standard error.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return RunEnv(ctx, dir, nil, args...)
}

// RunEnv is Run with extra environment variables (KEY=VALUE).
func RunEnv(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return nil, ErrNoGit
		}
		return nil, fmt.Errorf("git %s (in %s): %w: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// ErrNoGit is the error of what needs the git executable when PATH has none.
var ErrNoGit = errors.New("the git executable is not on PATH: validate --staged and --changed-since compare the work tree and its index with git (every other verb reads repositories without it)")

// TopLevel returns the root of the work tree containing dir. Without a git executable it is the nearest
// directory, from dir up, holding a .git entry (a directory, or the file of a linked work tree).
func TopLevel(ctx context.Context, dir string) (string, error) {
	out, err := Run(ctx, dir, "rev-parse", "--show-toplevel")
	if errors.Is(err, ErrNoGit) {
		return dotGitAbove(dir)
	}
	if err != nil {
		return "", diag.UsageError(err)
	}
	return strings.TrimSpace(string(out)), nil
}

// dotGitAbove is the nearest directory from dir up holding a .git entry.
func dotGitAbove(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", diag.UsageError(fmt.Errorf("%s: %w", dir, err))
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", diag.UsageError(fmt.Errorf("%s is not in a git work tree", dir))
		}
	}
}

// WorkTreeChange is how a catalog directory differs from a revision, as git sees it.
type WorkTreeChange struct {
	// Files are the files under the directory that differ (slash paths relative to it).
	Files []string
	// Top is the root of the work tree; GitDir its git directory (both absolute).
	Top, GitDir string
	// NotStaged, with staged, are the files under the directory whose work tree content is not what the
	// commit will hold: tracked files with unstaged changes, and untracked files (not ignored).
	NotStaged []string
}

// WorkTreeChanged lists the files under dir that differ from ref in the work tree (staged or not, plus untracked
// files), or only the staged ones when staged is true. Paths are slash-separated and relative to dir.
func WorkTreeChanged(ctx context.Context, dir, ref string, staged bool) ([]string, error) {
	ch, err := WorkTreeChanges(ctx, dir, ref, staged)
	if err != nil {
		return nil, err
	}
	return ch.Files, nil
}

// WorkTreeChanges is WorkTreeChanged, also saying where the repository is. Its git commands run at once,
// in dir, listing paths relative to it.
func WorkTreeChanges(ctx context.Context, dir, ref string, staged bool) (*WorkTreeChange, error) {
	cmds := [][]string{{"rev-parse", "--show-toplevel", "--absolute-git-dir"}}
	if staged {
		cmds = append(cmds, []string{"diff", "--cached", "--name-only", "-z", "--no-renames", "--relative", "--", "."},
			[]string{"diff", "--name-only", "-z", "--no-renames", "--relative", "--", "."},
			[]string{"ls-files", "-z", "--others", "--exclude-standard", "--", "."})
	} else {
		cmds = append(cmds, []string{"diff", "--name-only", "-z", "--no-renames", "--relative", ref, "--", "."},
			[]string{"ls-files", "-z", "--others", "--exclude-standard", "--", "."})
	}
	outs := make([][]byte, len(cmds))
	errs := make([]error, len(cmds))
	var wg sync.WaitGroup
	for i, args := range cmds {
		wg.Go(func() { outs[i], errs[i] = Run(ctx, dir, args...) })
	}
	wg.Wait()
	for _, err := range errs { // rev-parse's first: outside a repository, it says so
		if err != nil {
			return nil, diag.UsageError(err)
		}
	}
	top, gitDir, ok := strings.Cut(strings.TrimSuffix(string(outs[0]), "\n"), "\n")
	if !ok || top == "" || gitDir == "" {
		return nil, fmt.Errorf("git rev-parse in %s: unexpected output %q", dir, outs[0])
	}
	ch := &WorkTreeChange{Top: top, GitDir: gitDir}
	changed := outs[1:]
	if staged {
		ch.NotStaged = paths(outs[2:]...)
		changed = outs[1:2]
	}
	ch.Files = paths(changed...)
	return ch, nil
}

// paths are the distinct local paths of git's -z listings, in order.
func paths(listings ...[]byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range listings {
		for _, f := range strings.Split(string(l), "\x00") {
			if f == "" || !filepath.IsLocal(filepath.FromSlash(f)) || seen[f] {
				continue
			}
			seen[f] = true
			out = append(out, f)
		}
	}
	return out
}
