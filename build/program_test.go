package build

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// The bot's release image: one image per binary on the base's image of that platform, the binary as
// entrypoint, labels on every config and the index; building twice gives the same digest.
func TestProgramImage(t *testing.T) {
	ctx := context.Background()
	reg := registrytest.New(t, nil)
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64", "s390x"} {
		img, err := mutate.ConfigFile(mutate.MediaType(empty.Image, types.OCIManifestSchema1), &v1.ConfigFile{OS: "linux", Architecture: arch,
			Config: v1.Config{Labels: map[string]string{"base": arch}}})
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	baseRef, _ := name.NewTag(reg.Host+"/base/static:v1", name.Insecure)
	if err := remote.WriteIndex(baseRef, mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex), adds...)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bins := map[string]string{}
	for _, arch := range []string{"amd64", "arm64"} {
		p := filepath.Join(dir, "catalogbot-"+arch)
		if err := os.WriteFile(p, []byte("binary for "+arch), 0o755); err != nil {
			t.Fatal(err)
		}
		bins["linux/"+arch] = p
	}
	opts := Options{Base: baseRef.String(), NameOptions: []name.Option{name.Insecure}, Epoch: time.Unix(1700000000, 0),
		Labels: map[string]string{RevisionLabel: "0123456789abcdef0123456789abcdef01234567"}}
	prog := Program{Binaries: bins, Path: "/usr/local/bin/catalogbot", Args: []string{"serve"}}
	res, err := ProgramImage(ctx, prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := ProgramImage(ctx, prog, opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := res.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("not reproducible: %s then %s", d1, d2)
	}
	im, err := res.Index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 2 || im.Annotations[RevisionLabel] == "" {
		t.Fatalf("index: %+v", im)
	}
	for _, d := range im.Manifests {
		img, err := res.Index.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ := img.ConfigFile()
		if cfg.Architecture != d.Platform.Architecture || cfg.Config.Labels["base"] != d.Platform.Architecture ||
			cfg.Config.Entrypoint[0] != prog.Path || cfg.Config.Cmd[0] != "serve" || cfg.Config.Labels[RevisionLabel] == "" {
			t.Errorf("image for %s: %+v", d.Platform, cfg)
		}
		layers, _ := img.Layers()
		if len(layers) != 1 {
			t.Fatalf("%d layers", len(layers))
		}
	}
	// A platform the base lacks is an error naming it.
	bins["linux/ppc64le"] = bins["linux/amd64"]
	if _, err := ProgramImage(ctx, prog, opts); err == nil {
		t.Fatal("built for a platform the base lacks")
	}
	ref, _ := name.NewTag(reg.Host+"/ops/catalogbot:v1", name.Insecure)
	if _, err := Push(ctx, res, ref, Options{}); err != nil {
		t.Fatal(err)
	}
}

// TarDir's bytes depend only on names and contents (release checksums of the image archive).
func TestTarDirIsReproducible(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "blobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "blobs", "x")
	if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := TarDir(dir, filepath.Join(out, "1.tar")); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(f, later, later); err != nil {
		t.Fatal(err)
	}
	os.Chmod(f, 0o640)
	if err := TarDir(dir, filepath.Join(out, "2.tar")); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(out, "1.tar"))
	b, _ := os.ReadFile(filepath.Join(out, "2.tar"))
	if len(a) == 0 || string(a) != string(b) {
		t.Fatal("the archive changed with the files' times and modes")
	}
}
