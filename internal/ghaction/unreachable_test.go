package ghaction

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// When GitHub cannot be reached (it answers 5xx, or refuses the connection), the run has no verdict
// but still writes verdict=error to GITHUB_OUTPUT and the error to the step summary, and fails.
func TestActionWritesErrorVerdictWhenGitHubIsUnreachable(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "unicorn", http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	for name, api := range map[string]string{"5xx": down.URL, "refused": refused} {
		t.Run(name, func(t *testing.T) {
			dir, base, head := testRepo(t, "alice")
			tmp := t.TempDir()
			env := map[string]string{
				"GITHUB_EVENT_NAME": "pull_request",
				"GITHUB_EVENT_PATH": githubtest.PayloadFile(t, "pull_request/opened.payload.json", map[string]any{
					"pull_request.base.sha": base, "pull_request.head.sha": head, "pull_request.user.login": "alice"}),
				"GITHUB_API_URL":          api,
				"CATALOGBOT_GITHUB_TOKEN": "ghs_workflowtoken",
				"GITHUB_STEP_SUMMARY":     filepath.Join(tmp, "summary.md"),
				"GITHUB_OUTPUT":           filepath.Join(tmp, "output"),
			}
			_, err := Run(context.Background(), func(k string) string { return env[k] }, &bytes.Buffer{}, &bytes.Buffer{}, Options{RepoDir: dir, SkipImages: true})
			if err == nil {
				t.Fatal("a run that could not read the reviews succeeded")
			}
			if outs := readOutputs(t, env["GITHUB_OUTPUT"]); outs["verdict"] != "error" {
				t.Errorf("outputs %v, want verdict=error", outs)
			}
			summary, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
			if !strings.Contains(string(summary), "catalogbot: error") || !strings.Contains(string(summary), err.Error()[:20]) {
				t.Errorf("step summary does not give the error %q:\n%s", err, summary)
			}
		})
	}
}
