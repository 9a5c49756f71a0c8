// Package chromiumtest runs headless Chromium for the status pages' browser tests: the DOM a page has
// after parsing, and screenshots.
package chromiumtest

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Find finds a headless browser: $CATALOGBOT_CHROMIUM, else chromium on PATH. Without one the test is
// skipped, or fails under CATALOGBOT_REQUIRE_CHROMIUM=1.
func Find(t *testing.T) string {
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

// DOM is url's DOM after parsing, in a window 1280 wide and height high.
func DOM(t *testing.T, bin, url string, height int) string {
	t.Helper()
	return browse(t, bin, "--dump-dom", url, height)
}

// Screenshot takes a screenshot of url, checks it is a PNG of the window's size, and with keep true keeps
// it as testdata/screenshots/NAME.png.
func Screenshot(t *testing.T, bin, url, name string, height int, keep bool) {
	t.Helper()
	shot := filepath.Join(t.TempDir(), name+".png")
	browse(t, bin, "--screenshot="+shot, url, height)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("%s: screenshot: %v", url, err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != height {
		t.Errorf("%s: screenshot is %v", url, b)
	}
	if keep {
		data, _ := os.ReadFile(shot)
		dst := filepath.Join("testdata", "screenshots", name+".png")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
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
