package bundleimage

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// A bundle directory comes from a pull request: every way its content could make the image hold
// something else than its own regular files, or make the build read outside it or without bound, is
// refused with an error naming the file, before anything is pushed.
func TestBuildRefusesHostileBundleDirectories(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	annotations := func(dir, text string) error {
		return os.WriteFile(filepath.Join(dir, "metadata", "annotations.yaml"), []byte(text), 0o644)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) error
		lim   limits
		want  string
	}{
		{"a manifest linked to a host file", func(t *testing.T, dir string) error {
			return os.Symlink(outside, filepath.Join(dir, "manifests", "secret.yaml"))
		}, limits{}, "manifests/secret.yaml is a symbolic link"},
		{"a manifest linked inside the bundle", func(t *testing.T, dir string) error {
			return os.Symlink("../metadata/annotations.yaml", filepath.Join(dir, "manifests", "again.yaml"))
		}, limits{}, "manifests/again.yaml is a symbolic link"},
		{"manifests/ a link to a host directory", func(t *testing.T, dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, "manifests")); err != nil {
				return err
			}
			return os.Symlink(filepath.Dir(outside), filepath.Join(dir, "manifests"))
		}, limits{}, "manifests/: is a symbolic link"},
		{"tests/ a link to a host directory", func(t *testing.T, dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, "tests")); err != nil {
				return err
			}
			return os.Symlink(filepath.Dir(outside), filepath.Join(dir, "tests"))
		}, limits{}, "tests/: is a symbolic link"},
		{"metadata/ a file", func(t *testing.T, dir string) error {
			if err := os.RemoveAll(filepath.Join(dir, "metadata")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, "metadata"), nil, 0o644)
		}, limits{}, "metadata: is not a directory"},
		{"a named pipe (reading it would block)", func(t *testing.T, dir string) error {
			return syscall.Mkfifo(filepath.Join(dir, "manifests", "pipe.yaml"), 0o644)
		}, limits{}, "manifests/pipe.yaml is not a regular file (a named pipe)"},
		{"a look-alike name (Cyrillic a)", func(t *testing.T, dir string) error {
			return os.WriteFile(filepath.Join(dir, "manifests", "sеcret.yaml"), []byte("kind: Secret\n"), 0o644)
		}, limits{}, "mixes letters"},
		{"a file over the size limit", func(t *testing.T, dir string) error {
			return os.Truncate(filepath.Join(dir, "manifests", "openstack-lightspeed-operator.clusterserviceversion.yaml"), MaxFileSize+1)
		}, limits{}, "openstack-lightspeed-operator.clusterserviceversion.yaml: file is 16777217 bytes, larger than the 16777216-byte limit"},
		{"files over the total limit", func(t *testing.T, dir string) error {
			for i := range 17 {
				f := filepath.Join(dir, "manifests", "sparse"+string(rune('a'+i))+".yaml")
				if err := os.WriteFile(f, nil, 0o644); err != nil {
					return err
				}
				if err := os.Truncate(f, MaxFileSize); err != nil {
					return err
				}
			}
			return nil
		}, limits{}, "the bundle's files add up to more than the 268435456-byte limit"},
		{"too many files", func(t *testing.T, dir string) error {
			for i := range 20 {
				if err := os.WriteFile(filepath.Join(dir, "manifests", "f"+string(rune('a'+i))), nil, 0o644); err != nil {
					return err
				}
			}
			return nil
		}, limits{files: 20}, "more than 20 files and directories"},
		{"annotations naming another manifests directory (a path traversal in upstream's Dockerfile)", func(t *testing.T, dir string) error {
			return annotations(dir, "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.manifests.v1: ../../../etc/\n")
		}, limits{}, `metadata/annotations.yaml:3: operators.operatorframework.io.bundle.manifests.v1 is "../../../etc/"`},
		{"annotations of another bundle format", func(t *testing.T, dir string) error {
			return annotations(dir, "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.mediatype.v1: helm\n")
		}, limits{}, `mediatype.v1 is "helm": only registry+v1`},
		{"no package annotation", func(t *testing.T, dir string) error {
			return annotations(dir, "annotations:\n  operators.operatorframework.io.bundle.channels.v1: alpha\n")
		}, limits{}, "annotation operators.operatorframework.io.bundle.package.v1 is missing or empty"},
		{"an annotation given twice", func(t *testing.T, dir string) error {
			return annotations(dir, "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.package.v1: q\n")
		}, limits{}, "annotations.yaml:3: annotation operators.operatorframework.io.bundle.package.v1 given twice (first on line 2)"},
		{"an annotation that is a list", func(t *testing.T, dir string) error {
			return annotations(dir, "annotations:\n  operators.operatorframework.io.bundle.package.v1: p\n  x: [a, b]\n")
		}, limits{}, "annotations.yaml:3: annotation x is not a string"},
		{"a merge key", func(t *testing.T, dir string) error {
			return annotations(dir, "base: &b {operators.operatorframework.io.bundle.package.v1: p}\nannotations:\n  <<: *b\n")
		}, limits{}, "no merge keys"},
		{"annotations that are not a map", func(t *testing.T, dir string) error {
			return annotations(dir, "- annotations\n")
		}, limits{}, "annotations.yaml:1: not a map"},
		{"an empty annotations file", func(t *testing.T, dir string) error {
			return annotations(dir, "")
		}, limits{}, "annotations.yaml: empty"},
		{"no annotations file", func(t *testing.T, dir string) error {
			return os.Rename(filepath.Join(dir, "metadata", "annotations.yaml"), filepath.Join(dir, "metadata", "other.yaml"))
		}, limits{}, "metadata/annotations.yaml: not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := copyBundle(t, fixture)
			if err := c.setup(t, dir); err != nil {
				t.Fatal(err)
			}
			lim := limits{file: MaxFileSize, total: MaxTotalSize, files: MaxFiles}
			if c.lim.files > 0 {
				lim.files = c.lim.files
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			img, err := buildFS(t.Context(), root.FS(), lim)
			if err == nil {
				t.Fatalf("built %v; want an error containing %q", img, c.want)
			}
			if !strings.Contains(err.Error(), c.want) || diag.CategoryOf(err) != diag.Invalid || strings.Contains(err.Error(), "host secret") {
				t.Errorf("err = %v (%s); want an invalid-bundle error containing %q", err, diag.CategoryOf(err), c.want)
			}
		})
	}
}

// What the image does not hold may be anything: a link or a pipe beside manifests/ (release-config.yaml
// linked to a host file) is not read, and not in the image.
func TestBuildReadsOnlyTheTreesItCopies(t *testing.T) {
	dir := copyBundle(t, fixture)
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "release-config.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "release-config.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := Build(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entriesOf(t, img) {
		if !strings.HasPrefix(e.name, "manifests/") && !strings.HasPrefix(e.name, "metadata/") && !strings.HasPrefix(e.name, "tests/") {
			t.Errorf("the image holds %s", e.name)
		}
		if strings.Contains(e.data, "host secret") {
			t.Errorf("%s holds the host file", e.name)
		}
	}
}

// Labels are the annotations' scalars as written; the core labels the layout depends on are added when
// left out, never a default channel or anything else.
func TestLabelsAreTheAnnotationsAsWritten(t *testing.T) {
	got, err := labels([]byte(`# a comment
annotations:
  operators.operatorframework.io.bundle.package.v1: p
  operators.operatorframework.io.bundle.manifests.v1: manifests
  com.redhat.delivery.operator.bundle: true
  com.redhat.openshift.versions: 4.10
  quoted: "v4.12-v4.14"
  empty:
  anchored: &a x
  aliased: *a
---
annotations:
  second: document
`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		LabelPackage: "p", LabelManifests: "manifests", LabelMediatype: "registry+v1", LabelMetadata: "metadata/",
		"com.redhat.delivery.operator.bundle": "true", "com.redhat.openshift.versions": "4.10", "quoted": "v4.12-v4.14",
		"empty": "", "anchored": "x", "aliased": "x",
	}
	if len(got) != len(want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("label %s = %q, want %q", k, got[k], v)
		}
	}
}
