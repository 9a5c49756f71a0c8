package render

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// opmTool returns the reference opm (CATALOGBOT_OPM), or skips.
func opmTool(t *testing.T) string {
	t.Helper()
	return reftools.OPM(t)
}

// opmRender runs `opm render --use-http image -o yaml` with a private home (where containers/image
// finds a signature policy that accepts the unsigned test images).
func opmRender(t *testing.T, opm, image string) []byte {
	t.Helper()
	env := reftools.OPMEnv(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, opm, "render", "--use-http", image, "-o", "yaml")
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("opm render %s: %v\n%s", image, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestMatchesOPMRender pulls the same images from the same registry with opm and with Render. opm
// renders a whole index (every package, in package order) and Render one package per reference, so the
// index's references concatenated in package order must be opm's output; a bundle image must give opm's
// output exactly.
func TestMatchesOPMRender(t *testing.T) {
	opm := opmTool(t)
	reg := newTestRegistry(t)
	files, _ := twoPackages(t)
	index, _ := reg.push(t, "idx/catalog:v1", indexImage(t, files))
	bundleRef, _ := reg.push(t, "etcd/bundle:v0.9.4", bundleImage(t, shareddata.Dir(t, "bundles", "etcd", "0.9.4")))
	_, got := renderAndWrite(t, config(t, "catalog",
		Reference{Name: "commons-operator", Image: index},
		Reference{Name: "listener-operator", Image: index},
		Reference{Name: "etcd", Image: bundleRef}), testOptions(t))

	want := opmRender(t, opm, index)
	if ours := got["catalog/commons-operator/index.yaml"] + got["catalog/listener-operator/index.yaml"]; ours != string(want) {
		d, _ := unifiedDiff("opm", "render", want, []byte(ours), 60)
		t.Errorf("index image renders differently from opm:\n%s", d)
	}
	want = opmRender(t, opm, bundleRef)
	if ours := got["catalog/etcd/index.yaml"]; ours != string(want) {
		d, _ := unifiedDiff("opm", "render", want, []byte(ours), 60)
		t.Errorf("bundle image renders differently from opm:\n%s", d)
	}
}

// TestMatchesOPMOnEveryBundleImage serves every real bundle of the shared data as a bundle image and
// requires Render's file to be opm's output, byte for byte.
func TestMatchesOPMOnEveryBundleImage(t *testing.T) {
	opm := opmTool(t)
	reg := newTestRegistry(t)
	dirs, err := filepath.Glob(filepath.Join(shareddata.Dir(t, "bundles"), "*", "*", "manifests"))
	if err != nil || len(dirs) < 30 {
		t.Fatalf("found %d bundles: %v", len(dirs), err)
	}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		name := filepath.Base(filepath.Dir(dir)) + "-" + filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			img := bundleImage(t, dir)
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			ref, _ := reg.push(t, "bundles/"+strings.ToLower(name)+":v1", img)
			pkg := cf.Config.Labels[LabelPackage]
			_, got := renderAndWrite(t, config(t, "catalog", Reference{Name: pkg, Image: ref}), testOptions(t))
			want := opmRender(t, opm, ref)
			if ours := got["catalog/"+pkg+"/index.yaml"]; ours != string(want) {
				d, _ := unifiedDiff("opm", "render", want, []byte(ours), 60)
				t.Errorf("differs from opm:\n%s", d)
			}
		})
	}
}
