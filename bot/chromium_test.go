package bot

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/bot/store"
	"github.com/catalogbot/catalogbot/checks/graph"
	"github.com/catalogbot/catalogbot/internal/chromiumtest"
	"github.com/catalogbot/catalogbot/report"
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

// A channel with skips, branches and a bundle outside the channel, on a run page as a browser shows it:
// every entry drawn once, an edge per replaces and skip, the head and the added entries marked.
func TestUpgradeGraphInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	ch := channel("op.v1.0.0<op.v0.9.0", "op.v1.1.0<op.v1.0.0", "op.v1.1.1<op.v1.1.0", "op.v1.2.0<op.v1.1.1~op.v1.1.0~op.v1.0.0",
		"op.v1.2.1-rc1<op.v1.2.0", "op.v1.3.0<op.v1.2.0~op.v1.2.1-rc1~op.v1.1.1")
	d := graph.ChannelDiff{Package: "op", Channel: "stable", OldHead: "op.v1.2.0", NewHead: "op.v1.3.0",
		AddedEntries: []string{"op.v1.2.1-rc1", "op.v1.3.0"}}
	g := graph.UpgradeGraph(ch, d)
	r := &store.Run{ID: 7, Kind: kindCheck, Repo: "octo/catalog", PR: 12, HeadSHA: strings.Repeat("ab", 20), Status: store.RunCompleted,
		Conclusion: "success", Started: time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC),
		Report: &report.Report{Title: "pull request octo/catalog#12", Stages: []report.Stage{{Name: "graph", Status: report.Pass,
			Summary: "1 changed channel in 1 package", Details: "#### op / stable\n\n- head: `op.v1.2.0` → `op.v1.3.0`\n\n" + g.Mermaid(),
			Graphs: []report.UpgradeGraph{g}}}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { render(w, "run.html", runPage{Run: r}) }))
	defer srv.Close()
	dom := chromiumtest.DOM(t, bin, srv.URL, 1000)
	if n := strings.Count(dom, `<g class="node`); n != 7 {
		t.Errorf("%d entries drawn, want 7 (six entries and the replaced op.v0.9.0)", n)
	}
	for what, want := range map[string]int{`class="edge replaces"`: 6, `class="edge skips"`: 4, `<g class="node added head">`: 1, `<g class="node added">`: 1} {
		if n := strings.Count(dom, what); n != want {
			t.Errorf("%d of %s, want %d", n, what, want)
		}
	}
	chromiumtest.Screenshot(t, bin, srv.URL, "run-graph", 1000, *update)
}
