package bundleimage

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// bundleDirs are the repository's bundle fixture and every bundle of the shared data (when set), by name.
func bundleDirs(t *testing.T) map[string]string {
	t.Helper()
	dirs := map[string]string{"openstack-lightspeed-operator/0.0.2": fixture}
	root := shareddata.Root()
	if root == "" {
		t.Log("SHARED DATA NOT SET: only the repository's fixture is rendered")
		return dirs
	}
	found, err := filepath.Glob(filepath.Join(root, "bundles", "*", "*", "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range found {
		dir := filepath.Dir(m)
		rel, _ := filepath.Rel(filepath.Join(root, "bundles"), dir)
		if !strings.HasPrefix(rel, "_") {
			dirs[filepath.ToSlash(rel)] = dir
		}
	}
	return dirs
}

// The differential test of the image: pushed to a real registry and rendered back, by catalogbot's
// render and by opm (`opm render IMAGE --use-http`), it gives the olm.bundle its directory gives.
func TestPushedImageRendersAsItsDirectory(t *testing.T) {
	opm := ""
	if os.Getenv("CATALOGBOT_OPM") != "" || os.Getenv("CATALOGBOT_REQUIRE_TOOLS") == "1" {
		opm = reftools.OPM(t)
	} else {
		t.Log("SKIPPED THE OPM HALF: CATALOGBOT_OPM IS NOT SET")
	}
	reg := registrytest.New(t, nil)
	images, err := render.NewBundleImages(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dirs := bundleDirs(t)
	for name, dir := range dirs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := reg.Host + "/bundles/" + strings.ReplaceAll(name, "/", ":")
			if _, err := Push(t.Context(), dir, ref); err != nil {
				t.Fatal(err)
			}
			fromDir, err := bundle.RenderDir(t.Context(), dir, ref)
			if err != nil {
				t.Fatal(err)
			}
			want, err := bundle.Marshal(fromDir)
			if err != nil {
				t.Fatal(err)
			}
			fromImage, _, err := images.Render(t.Context(), ref)
			if err != nil {
				t.Fatal(err)
			}
			got, err := bundle.Marshal(fromImage)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("catalogbot's render of the image differs from the directory's:\n%s\nwant:\n%s", got, want)
			}
			if opm == "" {
				return
			}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, opm, "render", ref, "--use-http", "-o", "json")
			cmd.Env = reftools.OPMEnv(t, t.TempDir())
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("opm render %s: %v\n%s", ref, err, stderr.String())
			}
			var theirs, ours any
			if err := json.Unmarshal(stdout.Bytes(), &theirs); err != nil {
				t.Fatalf("opm's output: %v\n%s", err, stdout.String())
			}
			if err := json.Unmarshal(want, &ours); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(theirs, ours) {
				t.Errorf("opm's render of the image differs from the directory's:\n%s\nwant:\n%s", stdout.String(), want)
			}
		})
	}
}
