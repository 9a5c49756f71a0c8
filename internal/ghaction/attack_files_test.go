package ghaction

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// The file-model attack of issue 33 item 6 where the Action merges: alice owns foo only. With foo's
// v0.2.0 she adds, in foo's directory, bar's deprecation as an .indexignore'd file and a symbolic link to
// it. The owners attribution read the link's target path and gave everything to foo, the validator
// followed the link and loaded bar's deprecation, and the Action merged; the image build then refused
// the link. The link is refused at check time with the reason, and nothing merges.
func TestAttackActionMergesSymlinkToIgnoredFile(t *testing.T) {
	const full = "Codertocat/Hello-World"
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [alice]\n  bar: [bob]\n"
	dir := t.TempDir()
	g := newTestGit(t, dir, "")
	base := g.commit("admin", map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": catalogV1,
		"catalog/bar/catalog.json": strings.ReplaceAll(catalogV1, "foo", "bar")})
	head := g.commit("alice", map[string]string{
		"catalog/foo/catalog.json":         catalogV2,
		"catalog/foo/.indexignore":         "bar-deprecation.json\n",
		"catalog/foo/bar-deprecation.json": `{"schema":"olm.deprecations","package":"bar","entries":[{"reference":{"schema":"olm.package"},"message":"gone"}]}` + "\n",
		"catalog/foo/notes.json":           linkPrefix + "bar-deprecation.json",
	})
	gh := githubtest.New(t)
	gh.AddRepo(full)
	gh.SetRef(full, "heads/main", base)
	gh.AddPullRequest(full, githubtest.PullRequest{Number: 1, User: "alice", HeadSHA: head, BaseRef: "main", BaseSHA: base})
	tmp := t.TempDir()
	env := map[string]string{
		"GITHUB_EVENT_NAME": "pull_request_target", "GITHUB_EVENT_PATH": prPayload(t, 1, base, head, "alice"),
		"GITHUB_OUTPUT": filepath.Join(tmp, "out"), "GITHUB_API_URL": gh.URL, "CATALOGBOT_GITHUB_TOKEN": "ghs_x",
	}
	var stdout bytes.Buffer
	if _, err := Run(context.Background(), func(k string) string { return env[k] }, &stdout, &bytes.Buffer{}, Options{RepoDir: dir, SkipImages: true, Merge: true}); err != nil {
		t.Fatal(err)
	}
	outs := readOutputs(t, env["GITHUB_OUTPUT"])
	if merged, _ := gh.Merged(full, 1); merged || outs["merged"] != "false" {
		t.Fatalf("merged %v (output %q): foo's owner deprecated bar through a symbolic link\n%s", merged, outs["merged"], stdout.String())
	}
	if out := stdout.String(); !strings.Contains(out, "catalog/foo/notes.json") || !strings.Contains(out, "symbolic link") {
		t.Errorf("the output does not refuse the symbolic link catalog/foo/notes.json:\n%s", out)
	}
}
