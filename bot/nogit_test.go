package bot

import (
	"github.com/catalogbot/catalogbot/internal/registrytest"

	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/file"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
)

// workTreeLoader serves the repository at an endpoint's path (a work tree, as gittest makes) to go-git's
// in-process git server.
type workTreeLoader struct{}

func (workTreeLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	r, err := git.PlainOpen(filepath.Clean(ep.Path))
	if err != nil {
		return nil, transport.ErrRepositoryNotFound
	}
	return r.Storer, nil
}

// serveFileRemotesInProcess makes go-git serve file remotes itself for the rest of the test. Its file
// transport runs git-upload-pack, an executable the release image lacks too; the bot's remotes are
// GitHub's HTTPS ones, which go-git speaks itself, and the test's stand-in remote is a local path.
func serveFileRemotesInProcess(t *testing.T) {
	client.InstallProtocol("file", server.NewServer(workTreeLoader{}))
	t.Cleanup(func() { client.InstallProtocol("file", file.DefaultClient) })
}

// The release image has no git executable: the bot checks a pull request (checkout of its head, owners,
// render, validate), merges it, and publishes a push through go-git alone. PATH holds no git once the
// test's repositories are made (they are made with git, as people make them).
func TestChecksMergesAndPublishesWithoutGitExecutable(t *testing.T) {
	h := newHarness(t)
	base := registrytest.PushBase(t, h.reg.Host)
	target := h.reg.Host + "/ops/catalog:latest"
	main := h.seedMain(repoConfig + "publish:\n  image: " + target + "\n  base: " + base + "\n")
	head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
	h.openPR(1, "alice", head, main)
	after := h.label(h.releaseFoo("main", main, "catalog-admin"), "AFTER")
	t.Setenv("PATH", t.TempDir())
	serveFileRemotesInProcess(t)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
	h.waitIdle()
	if runs := h.gh.CheckRuns(repoFull); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Fatalf("check runs without git: %+v", runs)
	}
	if merged, at := h.gh.Merged(repoFull, 1); !merged || at != head {
		t.Fatalf("merged %v at %s, want the tested head %s", merged, at, head)
	}
	h.deliver("push", "push/payload.json", repoEdits(map[string]any{"ref": "refs/heads/main", "before": main, "after": after,
		"deleted": false, "created": false, "base_ref": nil, "repository.master_branch": "main"}))
	h.waitIdle()
	sts := h.gh.Statuses(repoFull, after)
	if len(sts) != 2 || sts[1].State != "success" || !strings.HasPrefix(sts[1].Description, "pushed sha256:") {
		t.Fatalf("statuses of the push without git: %+v", sts)
	}
	if got := digestOf(t, target); "pushed "+got != sts[1].Description {
		t.Errorf("%s is at %s, status says %q", target, got, sts[1].Description)
	}
}
