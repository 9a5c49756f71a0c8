package statuspage

import (
	"flag"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/queue"
	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden and the screenshots")

// Everything on the pages comes from pull requests and catalogs: it is escaped.
func TestRunPageEscapes(t *testing.T) {
	evil := "<script>alert(1)</script>"
	r := &store.Run{ID: 9, Kind: "check", Repo: "o/r", PR: 1, HeadSHA: "abc", Status: "completed", Started: time.Now(), Log: evil,
		Report: &report.Report{Title: evil, Stages: []report.Stage{{Name: "validate", Status: report.Fail, Summary: evil, Details: evil,
			Diagnostics: []diag.Diagnostic{{Severity: diag.Error, File: evil, Message: evil, Hint: evil}}}}}}
	w := httptest.NewRecorder()
	render(w, "run.html", runPage{Run: r, Retry: &retryInfo{State: queue.Queued, Attempts: 1, MaxAttempts: 5, Error: evil}})
	if strings.Contains(w.Body.String(), "<script>") || !strings.Contains(w.Body.String(), "&lt;script&gt;") {
		t.Errorf("unescaped or missing:\n%s", w.Body.String())
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}
