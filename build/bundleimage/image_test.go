package bundleimage

import (
	"archive/tar"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

var update = flag.Bool("update", false, "rewrite testdata/digests.golden")

// fixture is an upstream bundle directory kept in the repository (openstack-lightspeed-operator 0.0.2 of
// community-operators-prod, with release-config.yaml and tests/scorecard/).
const fixture = "../../render/release/testdata/render/b212bb168/before/operators/openstack-lightspeed-operator/0.0.2"

// copyBundle copies dir to a new temporary directory and returns it.
func copyBundle(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "bundle")
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// layerEntry is a tar header as the tests look at it.
type layerEntry struct {
	name     string
	typeflag byte
	mode     int64
	uid, gid int
	uname    string
	mtime    time.Time
	data     string
}

// entriesOf reads the one layer of img.
func entriesOf(t *testing.T, img v1.Image) []layerEntry {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("want one layer, have %d (%v)", len(layers), err)
	}
	mt, err := layers[0].MediaType()
	if err != nil || mt != types.OCILayer {
		t.Errorf("layer media type %s (%v), want %s", mt, err, types.OCILayer)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out []layerEntry
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, layerEntry{name: h.Name, typeflag: h.Typeflag, mode: h.Mode, uid: h.Uid, gid: h.Gid, uname: h.Uname + h.Gname, mtime: h.ModTime, data: string(data)})
	}
}

// The image of an upstream bundle directory: one layer with manifests/, metadata/ and tests/scorecard/
// at the root (nothing else of the directory), fixed owners, modes and times; the annotations as labels;
// one linux/amd64 OCI image created at the epoch.
func TestBuildHoldsTheBundleAsTheDockerfilesCopyIt(t *testing.T) {
	dir := copyBundle(t, fixture)
	if err := os.Chmod(filepath.Join(dir, "metadata", "annotations.yaml"), 0o600); err != nil {
		t.Fatal(err)
	}
	img, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entriesOf(t, img) {
		names = append(names, e.name)
		wantMode, wantType := int64(0o644), byte(tar.TypeReg)
		if strings.HasSuffix(e.name, "/") {
			wantMode, wantType = 0o755, tar.TypeDir
		} else {
			want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(e.name)))
			if err != nil || string(want) != e.data {
				t.Errorf("%s: the layer's content is not the file's (%v)", e.name, err)
			}
		}
		if e.typeflag != wantType || e.mode != wantMode || e.uid != 0 || e.gid != 0 || e.uname != "" || !e.mtime.Equal(time.Unix(0, 0)) {
			t.Errorf("%s: type %c mode %o owner %d:%d %q time %s; want type %c mode %o, 0:0, no names, the epoch",
				e.name, e.typeflag, e.mode, e.uid, e.gid, e.uname, e.mtime, wantType, wantMode)
		}
	}
	var want []string
	for _, tree := range []string{"manifests", "metadata", "tests"} {
		err := filepath.WalkDir(filepath.Join(dir, tree), func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				rel += "/"
			}
			want = append(want, rel)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("layer entries:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" || !cfg.Created.Equal(time.Unix(0, 0)) {
		t.Errorf("config: %s/%s created %s", cfg.OS, cfg.Architecture, cfg.Created)
	}
	if mt, _ := img.MediaType(); mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %s", mt)
	}
	wantLabels := map[string]string{
		LabelMediatype: "registry+v1", LabelManifests: "manifests/", LabelMetadata: "metadata/",
		LabelPackage: "openstack-lightspeed-operator", LabelChannels: "alpha",
		"operators.operatorframework.io.metrics.builder":        "operator-sdk-v1.38.0",
		"operators.operatorframework.io.metrics.mediatype.v1":   "metrics+v1",
		"operators.operatorframework.io.metrics.project_layout": "go.kubebuilder.io/v4",
		"operators.operatorframework.io.test.mediatype.v1":      "scorecard+v1",
		"operators.operatorframework.io.test.config.v1":         "tests/scorecard/",
	}
	if !maps.Equal(cfg.Config.Labels, wantLabels) {
		t.Errorf("labels:\n%v\nwant:\n%v", cfg.Config.Labels, wantLabels)
	}
}

// The same directory gives the same digest: a copy elsewhere with other modes and times, and with
// $SOURCE_DATE_EPOCH set, and the golden digests (which change only with the image's layout or a Go
// release whose compress/flate writes other bytes).
func TestBuildGoldenDigest(t *testing.T) {
	dirs := map[string]string{"openstack-lightspeed-operator/0.0.2 (render/release/testdata)": fixture}
	if root := shareddata.Root(); root != "" {
		for _, b := range []string{"kube-green/0.7.1", "node-healthcheck-operator/0.12.0", "etcd/0.9.4"} {
			dirs[b+" (shared data)"] = filepath.Join(root, "bundles", filepath.FromSlash(b))
		}
	}
	var got strings.Builder
	for _, name := range slices.Sorted(maps.Keys(dirs)) {
		first, err := Build(t.Context(), dirs[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d1, _ := first.Digest()
		elsewhere := copyBundle(t, dirs[name])
		then := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
		err = filepath.WalkDir(elsewhere, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			mode := os.FileMode(0o600)
			if d.IsDir() {
				mode = 0o700
			}
			if err := os.Chmod(p, mode); err != nil {
				return err
			}
			return os.Chtimes(p, then, then)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
		second, err := Build(t.Context(), elsewhere)
		if err != nil {
			t.Fatal(err)
		}
		if d2, _ := second.Digest(); d1 != d2 {
			t.Errorf("%s: %s here, %s in a copy with other modes and times", name, d1, d2)
		}
		fmt.Fprintf(&got, "%s %s\n", d1, name)
	}
	if len(dirs) < 4 {
		t.Log("SHARED DATA NOT SET: only the repository's fixture is held to its golden digest")
		want := string(mustRead(t, "testdata/digests.golden"))
		if !strings.Contains(want, got.String()) {
			t.Errorf("testdata/digests.golden has no line %q", got.String())
		}
		return
	}
	golden.Compare(t, "testdata/digests.golden", got.String(), *update)
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Errors of a bundle directory are the author's: diag.InvalidError.
func TestBuildErrorsAreTheBundles(t *testing.T) {
	dir := copyBundle(t, fixture)
	if err := os.RemoveAll(filepath.Join(dir, "metadata")); err != nil {
		t.Fatal(err)
	}
	_, err := Build(t.Context(), dir)
	if err == nil || diag.CategoryOf(err) != diag.Invalid || !strings.Contains(err.Error(), "metadata/: directory not found") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v (%s)", err, diag.CategoryOf(err))
	}
	if _, err := Build(t.Context(), filepath.Join(dir, "missing")); err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("a missing directory: err = %v", err)
	}
}
