package bot

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/githubtest"
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
	if len(runs) != 1 || runs[0].DetailsURL != publicURL+h.bot.pages.RunPath(1) {
		t.Fatalf("check run details link: %+v", runs)
	}
	page := h.get("/runs/1")
	for _, want := range []string{"Run #1: check of octo/catalog#2", head, `<b id="conclusion">failure</b>`,
		`<tr class="stage"><td>owners</td><td>❌ fail</td>`, "mallory is not an owner of package foo-operator",
		"<code>catalog/foo-operator/catalog.json</code>", `<h2 id="stage-graph">graph</h2>`, "stage validate started",
		"completed: failure", `<svg class="graph"`, `<g class="node added head">`} {
		if !strings.Contains(page, want) {
			t.Errorf("/runs/1 lacks %q", want)
		}
	}
	// The graph stage's graph travels in the stored report and is drawn from there.
	if strings.Contains(page, "```mermaid") {
		t.Errorf("/runs/1 shows the upgrade graph's mermaid source:\n%s", page)
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

// While a check's job waits to retry, its run page says why and when: the last attempt's error and the
// next attempt's time, not "status queued, Log (empty)". A rate limit past the client's wait defers the
// job to the reset (an hour here); GitHub answering 500 retries it after a back-off, and once the
// attempts are used up the page says the job failed, with the error.
func TestRunPageShowsRetry(t *testing.T) {
	t.Run("rate limited", func(t *testing.T) {
		h := newHarness(t, func(h *harness) { h.cfg.GitHub.MaxRateLimitWait = time.Second })
		main := h.seedMain(repoConfig)
		head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
		h.openPR(1, "alice", head, main)
		reset := time.Now().Add(time.Hour)
		h.gh.InjectFault("GET", "/repos/octo/catalog/pulls/1", 1, rateLimitFault(http.StatusForbidden, reset))
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
		page := h.waitForPage("/runs/1", `id="retry"`)
		for _, want := range []string{"<th>waiting to retry</th>", "API rate limit exceeded", "(0 of 3 attempts used)", "no attempt got far enough to log"} {
			if !strings.Contains(page, want) {
				t.Errorf("/runs/1 lacks %q:\n%s", want, page)
			}
		}
		// The job runs again a second after the reset: the page names that time and how far off it is.
		next := regexp.QuoteMeta(reset.Add(time.Second).UTC().Format("2006-01-02 15:04:05 UTC"))
		if !regexp.MustCompile(`<b id="next-attempt">` + next + `</b> \(in (59m5[0-9]s|1h0m[0-9]s)\)`).MatchString(page) {
			t.Errorf("/runs/1 does not announce the next attempt at %s:\n%s", next, page)
		}
	})
	t.Run("server errors", func(t *testing.T) {
		h := newHarness(t)
		main := h.seedMain(repoConfig)
		head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
		h.openPR(1, "alice", head, main)
		h.gh.FailNext("GET", "/repos/octo/catalog/pulls/1", http.StatusInternalServerError, 1000)
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
		page := h.waitForPage("/runs/1", `<th>waiting to retry</th>`)
		for _, want := range []string{"500 Internal Server Error", "(1 of 3 attempts used)", `<b id="next-attempt">`} {
			if !strings.Contains(page, want) {
				t.Errorf("/runs/1 while retrying lacks %q:\n%s", want, page)
			}
		}
		page = h.waitForPage("/runs/1", `<th>job failed</th>`)
		for _, want := range []string{"500 Internal Server Error", "failed and none is left (3 of 3 attempts used)", "Comment `/retest` to run it again"} {
			if !strings.Contains(page, want) {
				t.Errorf("/runs/1 after the last attempt lacks %q:\n%s", want, page)
			}
		}
		if strings.Contains(page, `id="next-attempt"`) {
			t.Errorf("/runs/1 announces a next attempt after the last one:\n%s", page)
		}
	})
	// An error quotes what a server answered, and a pull request chooses some of those servers: the pages
	// escape it and show a bounded part of it.
	t.Run("hostile error", func(t *testing.T) {
		h := newHarness(t)
		main := h.seedMain(repoConfig)
		head := h.label(h.releaseFoo("alice/foo", main, "alice"), "HEAD")
		h.openPR(1, "alice", head, main)
		f := githubtest.DefaultFault(http.StatusBadGateway)
		f.Body = `{"message": "<script>alert(1)</script>` + strings.Repeat("x", 50000) + `"}`
		h.gh.InjectFault("GET", "/repos/octo/catalog/pulls/1", 1000, f)
		h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(1, "alice", head, main, nil))
		page := h.waitForPage("/runs/1", `<th>waiting to retry</th>`)
		if strings.Contains(page, "<script>") || !strings.Contains(page, "&lt;script&gt;") || len(page) > 16<<10 ||
			!regexp.MustCompile(`x… \([0-9]+ more characters\)`).MatchString(page) {
			t.Errorf("run page of %d bytes does not show a bounded, escaped error:\n%.3000s", len(page), page)
		}
		index := h.get("/")
		if strings.Contains(index, "<script>") || len(index) > 16<<10 || !strings.Contains(index, "more characters)") {
			t.Errorf("status page of %d bytes does not show a bounded, escaped error:\n%.3000s", len(index), index)
		}
	})
}

// waitForPage fetches path until it contains want (30 s at most) and returns it.
func (h *harness) waitForPage(path, want string) string {
	h.t.Helper()
	var page string
	deadline := time.Now().Add(30 * time.Second)
	for page = h.get(path); !strings.Contains(page, want); page = h.get(path) {
		if time.Now().After(deadline) {
			h.t.Fatalf("%s never showed %q; last:\n%s\nlogs:\n%s", path, want, page, h.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return page
}
