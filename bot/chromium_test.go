package bot

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/chromiumtest"
)

// The status page and a run page, as a browser renders them: the DOM after parsing holds the queue
// counters, the run links and the stage table, and a screenshot is taken (kept in testdata/screenshots
// with -update).
func TestStatusPagesInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	h := newHarness(t)
	main := h.seedMain(repoConfig)
	head := h.label(h.releaseFoo("mallory/foo", main, "mallory"), "HEAD")
	h.openPR(2, "mallory", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(2, "mallory", head, main, nil))
	good := h.label(h.releaseFoo("alice/foo", main, "alice"), "GOOD")
	h.openPR(3, "alice", good, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(3, "alice", good, main, nil))
	h.waitIdle()
	// A third check waits to retry: GitHub rate-limited it until an hour from now.
	h.openPR(4, "alice", good, main)
	h.gh.InjectFault("GET", "/repos/octo/catalog/pulls/4", 1, rateLimitFault(http.StatusForbidden, time.Now().Add(time.Hour)))
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(4, "alice", good, main, nil))
	h.waitForPage("/runs/3", `id="retry"`)
	for _, page := range []struct {
		name, path string
		height     int
		want, not  []string
	}{
		{"status", "/", 1000, []string{`id="depth-done"`, `href="/runs/1"`, `href="/runs/2"`}, nil},
		// The upgrade graph is a drawing (inline SVG, no script), not mermaid source.
		{"run", "/runs/1", 1400, []string{`id="conclusion">failure`, "mallory is not an owner of package foo-operator", `id="stage-graph"`,
			`<svg class="graph"`, `<g class="node added head">`, ">foo-operator.v0.2.0</text>", `class="edge replaces"`},
			[]string{"```mermaid", "<script"}},
		{"run-retrying", "/runs/3", 1000, []string{`<th>waiting to retry</th>`, "API rate limit exceeded", `id="next-attempt"`}, nil},
	} {
		// Logged in with HTTP basic authentication, the status token as the password.
		url := strings.Replace(h.srv.URL, "http://", "http://catalogbot:"+statusToken+"@", 1) + page.path
		dom := chromiumtest.DOM(t, bin, url, page.height)
		for _, w := range page.want {
			if !strings.Contains(dom, w) {
				t.Errorf("%s: the rendered DOM lacks %q", page.path, w)
			}
		}
		for _, w := range page.not {
			if strings.Contains(dom, w) {
				t.Errorf("%s: the rendered DOM holds %q", page.path, w)
			}
		}
		chromiumtest.Screenshot(t, bin, url, page.name, page.height, *update)
	}
}
