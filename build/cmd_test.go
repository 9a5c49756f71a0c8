package build

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// extractConfigs unpacks the catalog layer's configs/ into a new directory and returns it.
func extractConfigs(t *testing.T, gz []byte) string {
	t.Helper()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil })
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, e := range readLayer(t, l) {
		p := filepath.Join(root, filepath.FromSlash(e.hdr.Name))
		switch e.hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.WriteFile(p, e.body, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return filepath.Join(root, "configs")
}

// localArgs maps an image command onto a local catalog and cache directory and a free port.
func localArgs(t *testing.T, cmd []string, configs, cache string) []string {
	t.Helper()
	var out []string
	for _, a := range cmd {
		a = strings.Replace(a, "--cache-dir=/tmp/cache", "--cache-dir="+cache, 1)
		if a == ConfigsDir {
			a = configs
		}
		out = append(out, a)
	}
	return append(out, "--port", strconv.Itoa(freePort(t)), "--pprof-addr=")
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// lockedBuffer collects a process's output for concurrent reading.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestImageCommandServesWithoutPrebuiltCache runs the real opm the way the catalog image runs it, on the
// catalog taken out of the built layer. opm's own command (the generate-dockerfile CMD) exits without the
// cache a daemonless build cannot pre-build; catalogbot's command builds the cache and serves.
func TestImageCommandServesWithoutPrebuiltCache(t *testing.T) {
	opm := tool(t, "CATALOGBOT_OPM")
	dir, _ := fbcDir(t)
	if err := os.Remove(filepath.Join(dir, "README.txt")); err != nil { // opm serve parses every file
		t.Fatal(err)
	}
	gz, err := CatalogLayer(t.Context(), dir, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	configs := extractConfigs(t, gz)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, opm, localArgs(t, OpmCmd, configs, filepath.Join(t.TempDir(), "cache"))...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "integrity check failed") {
		t.Errorf("opm %q without a cache: err = %v, want exit on the integrity check; output:\n%s", OpmCmd, err, out)
	}

	cmd := exec.CommandContext(ctx, opm, localArgs(t, Cmd, configs, filepath.Join(t.TempDir(), "cache"))...)
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-done
	}()
	for !strings.Contains(log.String(), "serving registry") {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("opm %q exited (%v) before serving:\n%s", Cmd, err, log.String())
		case <-ctx.Done():
			t.Fatalf("opm %q did not serve within 30s:\n%s", Cmd, log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	sc := bufio.NewScanner(strings.NewReader(log.String()))
	for sc.Scan() {
		if strings.Contains(sc.Text(), "level=error") || strings.Contains(sc.Text(), "level=fatal") {
			t.Errorf("opm logged: %s", sc.Text())
		}
	}
}
