package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// ruleOutsideRoot is the rule of a local reference that leads outside the repository.
const ruleOutsideRoot = "reference-outside-repository"

// defaultRoot is the repository local references must stay in when Options.Root is empty: the git work
// tree holding base (the first directory upwards with a .git entry), else base itself.
func defaultRoot(base string) string {
	abs, err := filepath.Abs(base)
	if err != nil {
		return base
	}
	for dir := abs; ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs
		}
		dir = parent
	}
}

// localDir resolves the directory of a local reference and checks that it is inside root: first as
// written (so nothing outside is even looked at), then with every symlink resolved (so a symlink in the
// repository cannot lead out of it). The error never names what a path outside resolves to.
func localDir(root, base, image string) (string, error) {
	outside := func(how string) error {
		return ruleErr(ruleOutsideRoot, "local references name bundle or catalog directories inside the repository, relative to the references config",
			diag.InvalidError(fmt.Errorf("local directory %q %s the repository", image, how)))
	}
	dir := filepath.FromSlash(image)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("repository directory %s: %w", root, err)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("directory %s: %w", image, err)
	}
	if !within(absRoot, absDir) {
		return "", outside("is outside")
	}
	realRoot, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", fmt.Errorf("repository directory %s: %w", root, err)
	}
	realDir, err := filepath.EvalSymlinks(absDir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ruleErr("directory-not-found", "", diag.InvalidError(fmt.Errorf("directory %s: %w", image, fs.ErrNotExist)))
	}
	if err != nil {
		// A symlink loop or a path through a file: nothing that could be rendered.
		return "", ruleErr("directory-not-found", "", diag.InvalidError(fmt.Errorf("directory %s: cannot be resolved", image)))
	}
	if !within(realRoot, realDir) {
		return "", outside("leads through a symlink outside")
	}
	return realDir, nil
}

// within tells whether path is root or under it (both absolute and clean).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
