package build

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// distribution is a running CNCF distribution registry (the binary in $CATALOGBOT_REGISTRY_BIN) behind a
// recording reverse proxy; Host is the proxy's "127.0.0.1:PORT".
type distribution struct {
	Host string
	rec  *recorder
}

// startDistribution starts the registry binary on a free loopback port with storage in a temp dir, waits
// for /v2/ and stops it when the test ends. It skips (or fails under CATALOGBOT_REQUIRE_TOOLS=1) when the
// binary is not configured.
func startDistribution(t *testing.T) *distribution {
	t.Helper()
	bin := tool(t, "CATALOGBOT_REGISTRY_BIN")
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	config := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
http:
  addr: %s
  relativeurls: true
`, filepath.Join(dir, "storage"), addr)
	cfgPath := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", cfgPath)
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-done
		if t.Failed() {
			t.Logf("registry log:\n%s", log.String())
		}
	})
	waitForV2(t, "http://"+addr+"/v2/", done, &log)

	u, err := url.Parse("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	proxy := httptest.NewServer(rec.wrap(httputil.NewSingleHostReverseProxy(u)))
	t.Cleanup(proxy.Close)
	return &distribution{Host: strings.TrimPrefix(proxy.URL, "http://"), rec: rec}
}

// waitForV2 polls the registry's API root until it answers 200, the process exits or 20 s pass.
func waitForV2(t *testing.T, url string, exited chan error, log *lockedBuffer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("registry exited before serving (%v):\n%s", err, log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry did not answer %s within 20s (last error %v):\n%s", url, err, log.String())
		}
	}
}
