package bot

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// fetch GETs path from the harness's bot, authenticating with set (nil: none).
func (h *harness) fetch(path string, set func(*http.Request)) (int, string) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if set != nil {
		set(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// checkedPR runs mallory's failing pull request #2 through the bot and returns its run's details link
// (the path part).
func checkedPR(h *harness) string {
	h.t.Helper()
	main := h.seedMain(repoConfig)
	head := h.releaseFoo("mallory/foo", main, "mallory")
	h.openPR(2, "mallory", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(2, "mallory", head, main, nil))
	h.waitIdle()
	runs := h.gh.CheckRuns(repoFull)
	if len(runs) != 1 {
		h.t.Fatalf("check runs: %+v", runs)
	}
	return strings.TrimPrefix(runs[0].DetailsURL, publicURL)
}

// An anonymous visitor of the bot learns nothing: the status page, the metrics and every run page (the
// check run's details link included, the repository not being listed as public) answer 401 with a body
// naming no repository, pull request or person; a wrong token is no better. The webhook still works
// (the check above ran from a signed delivery), and so do the probes.
func TestAttackStatusPageWithoutLogin(t *testing.T) {
	h := newHarness(t)
	details := checkedPR(h)
	if !regexp.MustCompile(`^/runs/1-[0-9a-f]{32}$`).MatchString(details) {
		t.Fatalf("details link %q is not an unguessable page ID", details)
	}
	bearer := func(tok string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
	}
	basic := func(pw string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth("catalog-admin", pw) }
	}
	for _, path := range []string{"/", "/metrics", "/runs/1", details} {
		for name, auth := range map[string]func(*http.Request){
			"anonymous": nil, "wrong bearer": bearer("status-token-7a3e5c1d9"), "wrong basic": basic(statusToken + "x"),
			"token as user name": func(r *http.Request) { r.SetBasicAuth(statusToken, "") }, "empty bearer": bearer(""),
		} {
			code, body := h.fetch(path, auth)
			if code != http.StatusUnauthorized {
				t.Errorf("%s %s: %d, want 401", name, path, code)
			}
			for _, leak := range []string{"octo", "catalog#", "mallory", "foo-operator", "catalogbot_", "failure"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s %s: the answer tells %q:\n%s", name, path, leak, body)
				}
			}
		}
	}
	for path, want := range map[string]string{"/": "octo/catalog", "/metrics": "catalogbot_jobs_total", "/runs/1": "mallory is not an owner",
		details: "mallory is not an owner"} {
		for name, auth := range map[string]func(*http.Request){"bearer": bearer(statusToken), "basic": basic(statusToken)} {
			if code, body := h.fetch(path, auth); code != http.StatusOK || !strings.Contains(body, want) {
				t.Errorf("%s %s: %d, want 200 with %q", name, path, code, want)
			}
		}
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, _ := h.fetch(path, nil); code != http.StatusOK {
			t.Errorf("%s: %d without login", path, code)
		}
	}
}

// Run numbers are sequential; page IDs are not. Knowing the details link of one run (or of the same run
// on another bot) gives nothing about another: a bare number, a neighbour with the known MAC or a MAC
// with a digit changed are refused, even for a repository whose run pages are public.
func TestAttackGuessRunID(t *testing.T) {
	public := func(h *harness) { h.cfg.Status.PublicRepositories = []string{"octo/*"} }
	h := newHarness(t, public)
	details := checkedPR(h)
	// Public repository: the details link shows the run without login.
	if code, body := h.fetch(details, nil); code != http.StatusOK || !strings.Contains(body, "mallory is not an owner") {
		t.Fatalf("details link of a public repository's run: %d", code)
	}
	head := h.releaseFoo("mallory/foo2", h.gh.PullRequest(repoFull, 2).BaseSHA, "mallory")
	h.openPR(3, "mallory", head, h.gh.PullRequest(repoFull, 2).BaseSHA)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(3, "mallory", head, h.gh.PullRequest(repoFull, 2).BaseSHA, nil))
	h.waitIdle()
	mac := strings.TrimPrefix(details, "/runs/1-")
	flipped := []byte(mac)
	flipped[5] = "01"[map[bool]int{true: 1}[flipped[5] == '0']]
	other := newHarness(t, public)
	otherDetails := checkedPR(other)
	if otherDetails == details {
		t.Fatalf("two bots gave run 1 the same page ID %s", details)
	}
	for _, guess := range []string{"/runs/2", "/runs/2-" + mac, "/runs/1-" + string(flipped), "/runs/1-" + mac[:31], "/runs/1-" + strings.ToUpper(mac),
		"/runs/01-" + mac, "/runs/1-" + mac + "0", otherDetails, "/runs/-1", "/runs/2-"} {
		code, body := h.fetch(guess, nil)
		if code == http.StatusOK || strings.Contains(body, "mallory") {
			t.Errorf("guess %s: %d\n%s", guess, code, body)
		}
	}
	// Run 2's own details link works, and is not run 1's with the number changed.
	var second string
	for _, cr := range h.gh.CheckRuns(repoFull) {
		if d := strings.TrimPrefix(cr.DetailsURL, publicURL); d != details {
			second = d
		}
	}
	if !strings.HasPrefix(second, "/runs/2-") || strings.TrimPrefix(second, "/runs/2-") == mac {
		t.Fatalf("run 2's details link %q", second)
	}
	if code, body := h.fetch(second, nil); code != http.StatusOK || !strings.Contains(body, "Run #2") {
		t.Errorf("run 2's details link: %d", code)
	}
}
