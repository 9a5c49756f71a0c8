package bot

import (
	"context"
	"fmt"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless browser: $CATALOGBOT_CHROMIUM, else chromium on PATH.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CATALOGBOT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CATALOGBOT_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium not found (install the Debian package chromium or set CATALOGBOT_CHROMIUM)")
	}
	t.Skip("CHROMIUM NOT FOUND: install the Debian package chromium or set CATALOGBOT_CHROMIUM")
	return ""
}

// The status page and a run page, as a browser renders them: the DOM after parsing holds the queue
// counters, the run links and the stage table, and a screenshot is taken (kept in testdata/screenshots
// with -update).
func TestStatusPagesInChromium(t *testing.T) {
	bin := chromium(t)
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
		dom := browse(t, bin, "--dump-dom", url, page.height)
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
		shot := filepath.Join(t.TempDir(), page.name+".png")
		browse(t, bin, "--screenshot="+shot, url, page.height)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: screenshot: %v", page.path, err)
		}
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != page.height {
			t.Errorf("%s: screenshot is %v", page.path, b)
		}
		if *update {
			data, _ := os.ReadFile(shot)
			dst := filepath.Join("testdata", "screenshots", page.name+".png")
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func browse(t *testing.T, bin, mode, url string, height int) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), fmt.Sprintf("--window-size=1280,%d", height), mode, url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s %s: %v", bin, mode, url, err)
	}
	return string(out)
}
