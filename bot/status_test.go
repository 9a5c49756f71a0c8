package bot

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// The status page lists the queue and the runs; a run's page (the check run's details link) shows its
// stages, diagnostics and log, escaped.
func TestStatusPages(t *testing.T) {
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("mallory/foo", main, "mallory"), "HEAD")
	h.openPR(2, "mallory", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(2, "mallory", head, main, nil))
	h.waitIdle()

	index := h.get("/")
	for _, want := range []string{"<title>status · catalogbot</title>", `id="depth-done"`, `<a href="/runs/1">#1</a>`,
		"octo/catalog", "#2", "completed", "failure", short(head)} {
		if !strings.Contains(index, want) {
			t.Errorf("/ lacks %q", want)
		}
	}
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 || runs[0].DetailsURL != publicURL+"/runs/"+h.bot.pageID(1) {
		t.Fatalf("check run details link: %+v", runs)
	}
	page := h.get("/runs/1")
	for _, want := range []string{"Run #1: check of octo/catalog#2", head, `<b id="conclusion">failure</b>`,
		`<tr class="stage"><td>owners</td><td>❌ fail</td>`, "mallory is not an owner of package foo-operator",
		"<code>catalog/foo-operator/catalog.json</code>", `<h2 id="stage-graph">graph</h2>`, "stage validate started",
		"completed: failure"} {
		if !strings.Contains(page, want) {
			t.Errorf("/runs/1 lacks %q", want)
		}
	}
	for path, status := range map[string]int{"/runs/999": 404, "/runs/x": 404, "/nope": 404} {
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
		req.SetBasicAuth("anyone", statusToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != status {
			t.Errorf("%s: %d, want %d", path, resp.StatusCode, status)
		}
	}
}

// Everything on the pages comes from pull requests and catalogs: it is escaped.
func TestRunPageEscapes(t *testing.T) {
	evil := "<script>alert(1)</script>"
	r := &run{ID: 9, Kind: kindCheck, Repo: "o/r", PR: 1, HeadSHA: "abc", Status: runCompleted, Started: time.Now(), Log: evil,
		Report: &report.Report{Title: evil, Stages: []report.Stage{{Name: "validate", Status: report.Fail, Summary: evil, Details: evil,
			Diagnostics: []diag.Diagnostic{{Severity: diag.Error, File: evil, Message: evil, Hint: evil}}}}}}
	w := httptest.NewRecorder()
	render(w, "run.html", r)
	if strings.Contains(w.Body.String(), "<script>") || !strings.Contains(w.Body.String(), "&lt;script&gt;") {
		t.Errorf("unescaped or missing:\n%s", w.Body.String())
	}
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
}
