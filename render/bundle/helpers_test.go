package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// sharedData is a path in the project's real data (see internal/shareddata).
func sharedData(t testing.TB, elem ...string) string {
	t.Helper()
	return shareddata.Dir(t, elem...)
}

// realBundles lists the bundle directories of the shared data (those holding metadata/annotations.yaml),
// keyed by their path below bundles/.
func realBundles(t testing.TB) map[string]string {
	t.Helper()
	root := sharedData(t, "bundles")
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == "annotations.yaml" && filepath.Base(filepath.Dir(p)) == "metadata" {
			dir := filepath.Dir(filepath.Dir(p))
			rel, _ := filepath.Rel(root, dir)
			out[filepath.ToSlash(rel)] = dir
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no bundles under %s", root)
	}
	return out
}

// opmTool returns the reference opm, skipping (or failing under CATALOGBOT_REQUIRE_TOOLS=1) without it.
func opmTool(t testing.TB) string {
	t.Helper()
	return reftools.OPM(t)
}

// mode is one way of rendering: a bundle directory as such (image ""), or as if it were the image img,
// optionally migrated to the olm.csv.metadata form.
type mode struct {
	name        string
	image       string
	csvMetadata bool
}

const testImage = "quay.io/catalogbot-test/demo-bundle:v1"

var modes = []mode{
	{name: "dir"},
	{name: "image", image: testImage},
	{name: "image-csvmeta", image: testImage, csvMetadata: true},
}

// runOPM renders dir with the reference opm in mode m; ok is false when opm fails (out is then its log).
func runOPM(t testing.TB, opm, dir string, m mode) (out []byte, ok bool) {
	t.Helper()
	args := []string{"render", dir, "-o", "json"}
	if m.image != "" {
		args = append(args, "--alpha-image-ref-template", m.image)
	}
	if m.csvMetadata {
		args = append(args, "--migrate-level", "bundle-object-to-csv-metadata")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, opm, args...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if _, exit := err.(*exec.ExitError); !exit {
			t.Fatalf("running opm: %v", err)
		}
		return stderr.Bytes(), false
	}
	return stdout.Bytes(), true
}

// renderMode renders dir with this package in mode m.
func renderMode(t testing.TB, dir string, m mode) ([]byte, error) {
	t.Helper()
	b, err := Options{CSVMetadata: m.csvMetadata}.RenderDir(context.Background(), dir, m.image)
	if err != nil {
		return nil, err
	}
	return Marshal(b)
}

// sameJSON compares two JSON documents as values.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("ours is not JSON: %v", err)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("opm's output is not JSON: %v", err)
	}
	return reflect.DeepEqual(va, vb)
}

// writeBundle writes files (slash paths relative to the bundle root) into a new temporary directory.
func writeBundle(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"manifests", "metadata"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// diffProperties describes how two rendered blobs differ, property by property, for failure messages.
func diffProperties(ours, theirs []byte) string {
	var a, b struct {
		Properties    []map[string]any
		RelatedImages []map[string]any
		Name, Package string
		Image         string
	}
	_ = json.Unmarshal(ours, &a)
	_ = json.Unmarshal(theirs, &b)
	var lines []string
	if a.Name != b.Name || a.Package != b.Package || a.Image != b.Image {
		lines = append(lines, "header: ours "+a.Name+"/"+a.Package+"/"+a.Image+", opm "+b.Name+"/"+b.Package+"/"+b.Image)
	}
	short := func(v any) string {
		s, _ := json.Marshal(v)
		if len(s) > 160 {
			s = append(s[:160], "..."...)
		}
		return string(s)
	}
	for i := 0; i < max(len(a.Properties), len(b.Properties)); i++ {
		var pa, pb any
		if i < len(a.Properties) {
			pa = a.Properties[i]
		}
		if i < len(b.Properties) {
			pb = b.Properties[i]
		}
		if !reflect.DeepEqual(pa, pb) {
			lines = append(lines, "property "+strconv.Itoa(i)+":\n  ours "+short(pa)+"\n  opm  "+short(pb))
		}
	}
	if !reflect.DeepEqual(a.RelatedImages, b.RelatedImages) {
		lines = append(lines, "relatedImages:\n  ours "+short(a.RelatedImages)+"\n  opm  "+short(b.RelatedImages))
	}
	return strings.Join(lines, "\n")
}
