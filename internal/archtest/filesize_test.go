package archtest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedBytes is the largest file the repository may track outside test data: a committed binary
// (cmd/catalogbot/catalogbot was 101 MB) or a generated dump makes every clone pay for it forever.
const maxTrackedBytes = 1 << 20

// isTestData tells whether a tracked path is test data (a testdata directory, Go's convention), where
// larger fixtures may live.
func isTestData(p string) bool {
	return strings.HasPrefix(p, "testdata/") || strings.Contains(p, "/testdata/")
}

// oversized lists the tracked files of the repository at root over maxTrackedBytes outside test data.
func oversized(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v", root, err)
	}
	var big []string
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if p == "" || isTestData(path.Clean(p)) {
			continue
		}
		fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			continue // deleted in the work tree, not yet committed
		}
		if fi.Mode().IsRegular() && fi.Size() > maxTrackedBytes {
			big = append(big, fmt.Sprintf("%s (%.1f MB)", p, float64(fi.Size())/(1<<20)))
		}
	}
	return big
}

func TestNoLargeTrackedFiles(t *testing.T) {
	if big := oversized(t, "../.."); len(big) > 0 {
		t.Fatalf("tracked files over %d bytes outside testdata/ (commit binaries to a release, not to git; "+
			"put large fixtures under a testdata directory): %s", maxTrackedBytes, strings.Join(big, ", "))
	}
}

// The check itself, on a throw-away repository: a committed binary is found, a large fixture under
// testdata/ and a small file are not.
func TestNoLargeTrackedFilesFindsABinary(t *testing.T) {
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	write := func(p string, n int) {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, bytes.Repeat([]byte{0x7f}, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cmd/tool/tool", maxTrackedBytes+1)
	write("pkg/testdata/big.json", 3*maxTrackedBytes)
	write("small.go", maxTrackedBytes)
	git("add", "-A")
	if got := oversized(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], "cmd/tool/tool ") {
		t.Fatalf("oversized = %q, want only cmd/tool/tool", got)
	}
}
