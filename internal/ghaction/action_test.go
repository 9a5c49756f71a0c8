package ghaction

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

const catalogV1 = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"quay.io/example/foo-bundle:v0.1.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}}]}
`

const catalogV2 = `{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"quay.io/example/foo-bundle:v0.1.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}}]}
{"schema":"olm.bundle","name":"foo.v0.2.0","package":"foo","image":"quay.io/example/foo-bundle:v0.2.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.2.0"}}]}
`

// testRepo makes a repository whose base commit holds v0.1.0 and whose head commit adds v0.2.0.
func testRepo(t *testing.T, owner string, config ...string) (dir, base, head string) {
	t.Helper()
	dir = t.TempDir()
	g := newTestGit(t, dir, "")
	commit := func(files map[string]string, author string) string { return g.commit(author, files) }
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [admin]\nowners:\n  foo: [" + owner + "]\n" + strings.Join(config, "")
	base = commit(map[string]string{".catalogbot.yaml": cfg, "catalog/foo/catalog.json": catalogV1}, "admin")
	head = commit(map[string]string{"catalog/foo/catalog.json": catalogV2}, owner)
	if err := g.repo.Storer.SetReference(plumbing.NewHashReference("refs/heads/main", plumbing.NewHash(base))); err != nil {
		t.Fatal(err)
	}
	return dir, base, head
}

func TestActionOnRealPayloads(t *testing.T) {
	for _, c := range []struct {
		payload, author, owner string
		verdict                string
	}{
		{"opened.payload.json", "Codertocat", "codertocat", "pass"},
		{"synchronize.payload.json", "Codertocat", "codertocat", "pass"},
		{"reopened.with-organization.payload.json", "Codertocat", "someone-else", "fail"},
		{"ready_for_review.with-installation.payload.json", "Codertocat", "someone-else", "fail"},
	} {
		t.Run(c.payload, func(t *testing.T) {
			dir, base, head := testRepo(t, c.owner)
			tmp := t.TempDir()
			env := map[string]string{
				"GITHUB_EVENT_NAME":   "pull_request",
				"GITHUB_EVENT_PATH":   githubtest.PayloadFile(t, "pull_request/"+c.payload, map[string]any{"pull_request.base.sha": base, "pull_request.head.sha": head, "pull_request.user.login": c.author}),
				"GITHUB_STEP_SUMMARY": filepath.Join(tmp, "summary.md"),
				"GITHUB_OUTPUT":       filepath.Join(tmp, "output"),
			}
			var stdout, stderr bytes.Buffer
			r, err := Run(context.Background(), func(k string) string { return env[k] }, &stdout, &stderr, Options{RepoDir: dir, SkipImages: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(r.Verdict()); got != c.verdict {
				t.Fatalf("verdict %s, want %s\n%s", got, c.verdict, stdout.String())
			}
			summary, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			if !strings.Contains(string(summary), "catalogbot: "+c.verdict) {
				t.Errorf("step summary lacks the verdict:\n%s", summary)
			}
			outputs, _ := os.ReadFile(env["GITHUB_OUTPUT"])
			if !strings.Contains(string(outputs), "verdict<<ghadelimiter_") || !strings.Contains(string(outputs), "\n"+c.verdict+"\n") || !strings.Contains(string(outputs), head) {
				t.Errorf("outputs:\n%s", outputs)
			}
			if c.verdict == "fail" && !strings.Contains(stdout.String(), "::error file=catalog/foo/catalog.json") {
				t.Errorf("no annotation for the denied file:\n%s", stdout.String())
			}
		})
	}
}

func TestActionRefusesOtherEvents(t *testing.T) {
	env := map[string]string{"GITHUB_EVENT_NAME": "issue_comment"}
	_, err := Run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{}, Options{RepoDir: "."})
	if err == nil || !strings.Contains(err.Error(), "pull_request") || !strings.Contains(err.Error(), "issue_comment") {
		t.Fatalf("err = %v", err)
	}
}

func TestActionBadPayload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "event.json")
	os.WriteFile(path, []byte(`{"action":"opened"}`), 0o644)
	env := map[string]string{"GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": path}
	_, err := Run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{}, Options{RepoDir: "."})
	if err == nil || !strings.Contains(err.Error(), "no pull_request") {
		t.Fatalf("err = %v", err)
	}
}

func TestOutputsDelimiterSafe(t *testing.T) {
	out := string(formatOutputs(map[string]string{"a": "x\nEOF\ny", "b": "z"}))
	if strings.Count(out, "ghadelimiter_") != 4 || !strings.HasPrefix(out, "a<<ghadelimiter_") {
		t.Fatalf("outputs:\n%s", out)
	}
}
