package template

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/render"
)

// registry is a local registry holding real bundles of the shared data.
type registry struct {
	*registrytest.Registry
	// tag and digest name each pushed bundle by its directory below bundles/ ("etcd/0.9.4").
	tag, digest map[string]string
	// observe, when set, sees every request path (countingRegistry only).
	observe func(path string)
}

// newRegistry starts a registry and pushes the named bundles of the shared data ("etcd/0.9.4").
func newRegistry(t testing.TB, bundles ...string) *registry {
	t.Helper()
	r := &registry{Registry: registrytest.New(t, nil), tag: map[string]string{}, digest: map[string]string{}}
	for _, b := range bundles {
		pkg, version, _ := strings.Cut(b, "/")
		img, err := bundleimage.Build(context.Background(), shareddata.Dir(t, "bundles", filepath.FromSlash(b)))
		if err != nil {
			t.Fatal(err)
		}
		r.push(t, b, img, "bundles/"+pkg, "v"+version)
	}
	return r
}

// push pushes img as repo:tag and records it as bundle key.
func (r *registry) push(t testing.TB, key string, img v1.Image, repo, tag string) {
	t.Helper()
	ref := r.Host + "/" + repo + ":" + tag
	parsed, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(parsed, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	r.tag[key], r.digest[key] = ref, r.Host+"/"+repo+"@"+d.String()
}

// source is an online Images source on a fresh store.
func source(t testing.TB) *Images {
	t.Helper()
	pull, err := render.NewBundleImages(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &Images{Store: NewStore(""), Pull: pull}
}

// ours renders a template and prints it in format ("json" or "yaml").
func ours(t testing.TB, src Source, data []byte, opts Options, format string) ([]byte, error) {
	t.Helper()
	c, err := Render(context.Background(), data, "template.yaml", src, opts)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if format == "mermaid" {
		err = WriteMermaid(&buf, c, opts.OPMVersion, io.Discard)
	} else {
		err = Write(&buf, c, format)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), nil
}

// opmTemplate runs `opm alpha render-template` on data; ok false with opm's error message (the text
// after "Error: ") when opm fails.
func opmTemplate(t testing.TB, opm string, data []byte, opts Options, format string) (out []byte, msg string, ok bool) {
	t.Helper()
	home := t.TempDir()
	env := reftools.OPMEnv(t, home)
	file := filepath.Join(home, "template.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"alpha", "render-template", "--use-http", "-o", format}
	if opts.MigrateLevel != "" {
		args = append(args, "--migrate-level", opts.MigrateLevel)
	}
	if opts.OPMVersion == OPMv1_46_0 {
		// v1.46.0 has one sub-command per type and no detection: the type comes first, and the
		// registry flag belongs to the sub-command.
		args = []string{"alpha", "render-template", opts.Type, "--use-http", "-o", format}
		if opts.MigrateLevel != "" {
			args = append(args, "--migrate-level", opts.MigrateLevel)
		}
	} else if opts.Type != "" {
		args = append(args, opts.Type)
	}
	args = append(args, file)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, opm, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("opm timed out: %s", stderr.Bytes())
		}
		s := stderr.String()
		if i := strings.Index(s, "Error: "); i >= 0 {
			s = s[i+len("Error: "):]
		}
		s, _, _ = strings.Cut(s, "\nUsage:\n")
		return nil, strings.TrimSuffix(s, "\n"), false
	}
	return stdout.Bytes(), "", true
}
