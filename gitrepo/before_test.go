package gitrepo

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
)

// BeforeFiles reads every file in one git process and answers as Before does, for files that existed,
// did not exist, hold a space or a newline in their name, or are not files at the revision.
func TestBeforeFilesMatchesBefore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT NOT INSTALLED")
	}
	repo := t.TempDir()
	runGit(t, repo, "init", "-q")
	cat := filepath.Join(repo, "catalog")
	write(t, filepath.Join(cat, "a", "catalog.json"), `{"a":1}`)
	write(t, filepath.Join(cat, "b c", "catalog.json"), "")
	write(t, filepath.Join(cat, "d\ne.json"), `{"d":1}`)
	runGit(t, repo, "add", "-A")
	runGit(t, repo, "commit", "-qm", "base")
	write(t, filepath.Join(cat, "a", "catalog.json"), `{"a":2}`)
	write(t, filepath.Join(cat, "new.json"), `{}`)

	ctx := context.Background()
	files := []string{"a/catalog.json", "b c/catalog.json", "d\ne.json", "new.json", "a"}
	for _, staged := range []bool{false, true} {
		fast := BeforeFiles(ctx, cat, "HEAD", staged, files)
		slow := Before(ctx, cat, "HEAD", staged)
		for _, f := range append(files, "other.json") {
			fd, fok, ferr := fast(f)
			sd, sok, serr := slow(f)
			if string(fd) != string(sd) || fok != sok || (ferr == nil) != (serr == nil) {
				t.Errorf("staged %v, %q: BeforeFiles gives %q %v %v, Before %q %v %v", staged, f, fd, fok, ferr, sd, sok, serr)
			}
		}
	}
}
