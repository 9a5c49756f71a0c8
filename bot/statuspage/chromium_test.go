package statuspage

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

// A channel with skips, branches and a bundle outside the channel, on a run page as a browser shows it:
// every entry drawn once, an edge per replaces and skip, the head and the added entries marked.
func TestUpgradeGraphInChromium(t *testing.T) {
	bin := chromiumtest.Find(t)
	ch := channel("op.v1.0.0<op.v0.9.0", "op.v1.1.0<op.v1.0.0", "op.v1.1.1<op.v1.1.0", "op.v1.2.0<op.v1.1.1~op.v1.1.0~op.v1.0.0",
		"op.v1.2.1-rc1<op.v1.2.0", "op.v1.3.0<op.v1.2.0~op.v1.2.1-rc1~op.v1.1.1")
	d := graph.ChannelDiff{Package: "op", Channel: "stable", OldHead: "op.v1.2.0", NewHead: "op.v1.3.0",
		AddedEntries: []string{"op.v1.2.1-rc1", "op.v1.3.0"}}
	g := graph.UpgradeGraph(ch, d)
	r := &store.Run{ID: 7, Kind: "check", Repo: "octo/catalog", PR: 12, HeadSHA: strings.Repeat("ab", 20), Status: "completed",
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
