package ghaction

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// fakeReleases serves, for each version, a stand-in binary "binary of VERSION" and its SHA256SUMS, as
// GitHub's release downloads do.
func fakeReleases(t *testing.T, versions ...string) string {
	t.Helper()
	mux := http.NewServeMux()
	for _, v := range versions {
		file := "catalogbot_" + strings.TrimPrefix(v, "v") + "_linux_amd64"
		data := []byte("binary of " + v)
		mux.HandleFunc("/"+v+"/"+file, func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
		mux.HandleFunc("/"+v+"/SHA256SUMS", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "%x  %s\n", sha256.Sum256(data), file)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

// actionGet runs hack/action-get.sh for ref and returns its found output, the installed binary (nil when
// none) and its log.
func actionGet(t *testing.T, ref, gitURL, releases string) (string, []byte, string) {
	t.Helper()
	tmp, output := t.TempDir(), filepath.Join(t.TempDir(), "output")
	cmd := exec.Command("bash", "../../hack/action-get.sh")
	cmd.Env = append(os.Environ(), "ACTION_REF="+ref, "ACTION_REPOSITORY=catalogbot/catalogbot", "RUNNER_TEMP="+tmp,
		"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "GITHUB_OUTPUT="+output, "GITHUB_SERVER_URL=http://127.0.0.1:1",
		"CATALOGBOT_RELEASE_URL="+releases, "CATALOGBOT_GIT_URL="+gitURL)
	log, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("action-get.sh for %s: %v\n%s", ref, err, log)
	}
	bin, _ := os.ReadFile(filepath.Join(tmp, "catalogbot"))
	return readOutputs(t, output)["found"], bin, string(log)
}

// The Action pinned by a release commit's full SHA (GitHub's hardening advice) downloads that release's
// checksummed binary, found through the repository's tags (annotated or not), instead of building from
// source; a commit no release tag names, and a repository whose tags cannot be listed, build from source.
func TestActionGetResolvesReleaseCommitSHA(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("GIT NOT INSTALLED (GitHub-hosted runners have it)")
	}
	dir := t.TempDir()
	g := newTestGit(t, dir, "main")
	annotated := g.commit("admin", map[string]string{"a": "1"})
	light := g.commit("admin", map[string]string{"a": "2"})
	untagged := g.commit("admin", map[string]string{"a": "3"})
	sig := &object.Signature{Name: "admin", Email: "admin@example.test", When: time.Unix(0, 0)}
	if _, err := g.repo.CreateTag("v0.0.1", plumbing.NewHash(annotated), &git.CreateTagOptions{Tagger: sig, Message: "v0.0.1"}); err != nil {
		t.Fatal(err)
	}
	for tag, at := range map[string]string{"v0.0.2": light, "v0.0.2-rc1": untagged, "latest": untagged} {
		if _, err := g.repo.CreateTag(tag, plumbing.NewHash(at), nil); err != nil {
			t.Fatal(err)
		}
	}
	releases := fakeReleases(t, "v0.0.1", "v0.0.2")
	for sha, want := range map[string]string{annotated: "v0.0.1", light: "v0.0.2"} {
		found, bin, log := actionGet(t, sha, dir, releases)
		if found != "true" || string(bin) != "binary of "+want || !strings.Contains(log, "is release "+want) {
			t.Errorf("pinned at %s's commit: found %q, binary %q\n%s", want, found, bin, log)
		}
	}
	// Neither a pre-release tag nor a moving name makes a commit a release.
	if found, bin, log := actionGet(t, untagged, dir, releases); found != "false" || bin != nil || !strings.Contains(log, "is not a release") {
		t.Errorf("pinned at an untagged commit: found %q, binary %q\n%s", found, bin, log)
	}
	if found, bin, log := actionGet(t, annotated, filepath.Join(dir, "no-such-repository"), releases); found != "false" || bin != nil || !strings.Contains(log, "cannot list the release tags") {
		t.Errorf("tags unreachable: found %q, binary %q\n%s", found, bin, log)
	}
	// A tag still downloads directly.
	if found, bin, _ := actionGet(t, "v0.0.2", dir, releases); found != "true" || string(bin) != "binary of v0.0.2" {
		t.Errorf("pinned at v0.0.2: found %q, binary %q", found, bin)
	}
}
