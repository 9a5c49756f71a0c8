package main

import (
	"archive/tar"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/catalogbot/catalogbot/build"
)

// probe stands for catalogbot in the image: it does what pr and serve need of the system (a directory
// under os.TempDir, the system's CA certificates) and says what failed.
const probe = `package main

import (
	"crypto/x509"
	"fmt"
	"os"
)

func main() {
	dir, err := os.MkdirTemp("", "catalogbot-rendered-")
	if err != nil {
		fmt.Println("temp:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(dir+"/catalog.json", []byte("{}"), 0o644); err != nil {
		fmt.Println("write:", err)
		os.Exit(1)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || len(pool.Subjects()) == 0 { //nolint:staticcheck // a count is all this needs
		fmt.Println("certs:", err)
		os.Exit(1)
	}
	fmt.Println("ok", os.Getuid())
}
`

// runIn unpacks img's filesystem into a directory and runs its entrypoint there (chroot) as the image's
// user, returning what it printed.
func runIn(t *testing.T, res build.Result) (string, error) {
	t.Helper()
	idx, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	img, err := res.Index.Image(idx.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(root, h.Name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, os.FileMode(h.Mode&0o777)|map[bool]os.FileMode{true: os.ModeSticky}[h.Mode&0o1000 != 0]); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, data, os.FileMode(h.Mode&0o777)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cfg.Config.Entrypoint[0])
	cmd.Env = []string{} // a container gets none of the host's
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	if u := cfg.Config.User; u != "" {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: 65532, Gid: 65532}
		if u != "65532:65532" {
			t.Fatalf("user %q", u)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The release image on the scratch base runs what pr and serve need: a temporary directory it can write
// (/tmp, 01777), the CA certificates, as the non-root user. Without those (the bare scratch image
// build.ProgramImage makes of the binary alone) the same program cannot create its temporary directory.
func TestScratchImageHasWhatThePipelineNeeds(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running the image's program in its filesystem needs chroot (root)")
	}
	certs := "/etc/ssl/certs/ca-certificates.crt"
	if _, err := os.Stat(certs); err != nil {
		t.Skipf("no CA certificates on this machine: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "probe")
	gobuild := exec.Command("go", "build", "-o", bin, "main.go")
	gobuild.Dir = dir
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GO111MODULE=off")
	if out, err := gobuild.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	bins := pairs{"linux/" + goarch(t): bin}
	p, err := program("scratch", bins, certs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := buildImage(t, p)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, res); err != nil || !strings.HasPrefix(out, "ok 65532") {
		t.Fatalf("the scratch release image: %v\n%s", err, out)
	}
	bare, err := buildImage(t, buildProgram(bins))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runIn(t, bare); err == nil || !strings.Contains(out, "temp:") {
		t.Fatalf("the binary alone on scratch ran: the test proves nothing (%v)\n%s", err, out)
	}
}

func goarch(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOARCH").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func buildProgram(bins pairs) build.Program {
	return build.Program{Binaries: bins, Path: "/usr/local/bin/catalogbot", Args: []string{"serve"}}
}

func buildImage(t *testing.T, p build.Program) (build.Result, error) {
	t.Helper()
	return build.ProgramImage(context.Background(), p, build.Options{Base: "scratch", Epoch: time.Unix(1600000000, 0).UTC()})
}
