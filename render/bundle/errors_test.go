package bundle

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

func mapFS(files map[string]string) fstest.MapFS {
	m := fstest.MapFS{
		"manifests": &fstest.MapFile{Mode: fs.ModeDir | 0o755},
		"metadata":  &fstest.MapFile{Mode: fs.ModeDir | 0o755},
	}
	for name, content := range files {
		m[name] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
	}
	return m
}

// wantInvalid checks that err is a diag.InvalidError whose message holds every part.
func wantInvalid(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Render succeeded, want an error containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
	if c := diag.CategoryOf(err); c != diag.Invalid {
		t.Errorf("error %q has category %s, want invalid", err, c)
	}
}

// TestErrorMessages renders every failing edge case from an in-memory file system and checks the message
// names the file and what is wrong.
func TestErrorMessages(t *testing.T) {
	for _, c := range edgeCases {
		if c.errHas == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			_, err := Render(context.Background(), mapFS(c.files), "")
			wantInvalid(t, err, c.errHas)
		})
	}
}

func TestRenderSucceedsOnEdgeCasesFromMapFS(t *testing.T) {
	for _, c := range edgeCases {
		if c.errHas != "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b, err := Render(context.Background(), mapFS(c.files), testImage)
			if err != nil {
				t.Fatal(err)
			}
			if b.Schema != "olm.bundle" || b.Package == "" || b.Name == "" || len(b.Properties) == 0 {
				t.Fatalf("incomplete blob: %+v", b)
			}
		})
	}
}

func TestMissingDirectory(t *testing.T) {
	fsys := fstest.MapFS{"metadata/annotations.yaml": &fstest.MapFile{Data: []byte(baseAnnotations)}}
	_, err := Render(context.Background(), fsys, "")
	wantInvalid(t, err, "manifests/: directory not found")

	fsys = fstest.MapFS{"manifests/csv.yaml": &fstest.MapFile{Data: []byte(baseCSV)}, "manifests/crd.yaml": &fstest.MapFile{Data: []byte(baseCRD)}}
	_, err = Render(context.Background(), fsys, "")
	wantInvalid(t, err, "metadata/: directory not found")

	_, err = RenderDir(context.Background(), filepath.Join(t.TempDir(), "nope"), "")
	wantInvalid(t, err, "nope")
}

func TestWarningsForSkippedFiles(t *testing.T) {
	var warnings []string
	opts := Options{Warn: func(m string) { warnings = append(warnings, m) }}
	files := variant(map[string]string{
		"manifests/README.md":     "# Demo\n\nThis is: not: yaml\n",
		"manifests/comments.yaml": "# nothing\n",
		"manifests/svc.yaml":      "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\n",
	})
	fsys := mapFS(files)
	fsys["manifests/empty.yaml"] = &fstest.MapFile{}
	if _, err := opts.Render(context.Background(), fsys, ""); err != nil {
		t.Fatal(err)
	}
	all := strings.Join(warnings, "\n")
	for _, want := range []string{
		"manifests/README.md: not YAML or JSON",
		"manifests/comments.yaml: empty",
		"manifests/empty.yaml: empty",
		"manifests/svc.yaml: holds more than one YAML document",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning %q in:\n%s", want, all)
		}
	}
}

func TestSymlinks(t *testing.T) {
	link := func(target string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
	}
	t.Run("inside the bundle is followed", func(t *testing.T) {
		fsys := mapFS(variant(map[string]string{"manifests/widgets.crd.yaml": "", "shared/widgets.yaml": baseCRD}))
		fsys["shared/alias"] = link(".")
		fsys["manifests/widgets.crd.yaml"] = link("../shared/alias/widgets.yaml")
		if _, err := Render(context.Background(), fsys, ""); err != nil {
			t.Fatal(err)
		}
	})
	for name, target := range map[string]string{
		"climbing out":   "../../etc/passwd",
		"absolute":       "/etc/passwd",
		"via a dir link": "../up/passwd",
	} {
		t.Run(name+" is refused", func(t *testing.T) {
			fsys := mapFS(baseFiles())
			fsys["up"] = link("..")
			fsys["manifests/evil.yaml"] = link(target)
			_, err := Render(context.Background(), fsys, "")
			wantInvalid(t, err, "manifests/evil.yaml", "points outside the bundle")
		})
	}
	t.Run("loops are refused", func(t *testing.T) {
		fsys := mapFS(baseFiles())
		fsys["manifests/a.yaml"] = link("b.yaml")
		fsys["manifests/b.yaml"] = link("a.yaml")
		_, err := Render(context.Background(), fsys, "")
		wantInvalid(t, err, "manifests/a.yaml: too many levels of symlinks")
	})
	t.Run("symlinked manifests directory is refused", func(t *testing.T) {
		fsys := mapFS(nil)
		fsys["real/csv.yaml"] = &fstest.MapFile{Data: []byte(baseCSV)}
		fsys["manifests"] = link("real")
		_, err := Render(context.Background(), fsys, "")
		wantInvalid(t, err, "manifests/: is a symlink")
	})
	t.Run("real directory: os.Root keeps links inside", func(t *testing.T) {
		outside := filepath.Join(t.TempDir(), "secret.yaml")
		if err := os.WriteFile(outside, []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		dir := writeBundle(t, baseFiles())
		if err := os.Symlink(outside, filepath.Join(dir, "manifests", "secret.yaml")); err != nil {
			t.Fatal(err)
		}
		_, err := RenderDir(context.Background(), dir, "")
		wantInvalid(t, err, "manifests/secret.yaml", "points outside the bundle")
	})
}

func TestLimits(t *testing.T) {
	fsys := mapFS(baseFiles())
	_, err := Options{MaxFileSize: 1000}.Render(context.Background(), fsys, "")
	wantInvalid(t, err, "manifests/demo.clusterserviceversion.yaml: file is", "larger than the 1000-byte limit")

	_, err = Options{MaxTotalSize: 2000}.Render(context.Background(), fsys, "")
	wantInvalid(t, err, "the bundle's files add up to more than the 2000-byte limit")

	_, err = Options{MaxFiles: 1}.Render(context.Background(), fsys, "")
	wantInvalid(t, err, "manifests/: more than 1 files")

	fsys["manifests/fifo.yaml"] = &fstest.MapFile{Mode: fs.ModeNamedPipe}
	_, err = Render(context.Background(), fsys, "")
	wantInvalid(t, err, "manifests/fifo.yaml: not a regular file")
}

// TestYAMLBomb feeds a billion-laughs document: the decoder must refuse it quickly.
func TestYAMLBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("x" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	start := time.Now()
	_, err := Render(context.Background(), mapFS(variant(map[string]string{"manifests/bomb.yaml": b.String()})), "")
	wantInvalid(t, err, "manifests/bomb.yaml", "excessive aliasing")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing the bomb took %s", d)
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Render(ctx, mapFS(baseFiles()), "")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}
