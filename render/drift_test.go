package render

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// zncSetup serves the eight operator catalogs of zncdatadev/kubedoop-catalog@af13ed5 as index images
// (one package each, at the repositories the real config names) and returns that config, its duplicate
// reference removed and its images moved to the local registry, and the committed rendered catalog.
func zncSetup(t *testing.T) (cfg *Config, committed string) {
	t.Helper()
	reg := newTestRegistry(t)
	for pkg, content := range zncCatalog(t) {
		reg.push(t, "zncdatadev/"+pkg+"-catalog:latest", indexImage(t, map[string]string{pkg + "/index.yaml": content}))
	}
	dir := shareddata.Dir(t, "refconfigs", "zncdatadev-kubedoop-catalog")
	data, err := os.ReadFile(filepath.Join(dir, "catalog-template.yaml@af13ed5"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "quay.io/", reg.Host+"/")
	// The real file lists zookeeper-operator twice (lines 9-10 and 13-14): drop the second.
	lines := strings.SplitAfter(text, "\n")
	if lines[12] != "- name: zookeeper-operator\n" {
		t.Fatalf("unexpected line 13: %q", lines[12])
	}
	text = strings.Join(append(lines[:12:12], lines[14:]...), "")
	cfg, ds := ParseConfig([]byte(text), "catalog-template.yaml")
	if len(ds) > 0 || len(cfg.References) != 8 {
		t.Fatalf("config: %v, %d references", ds, len(cfg.References))
	}
	// The committed directory is named after the config's name ("catalog").
	committed = t.TempDir()
	if err := os.CopyFS(filepath.Join(committed, cfg.Name), os.DirFS(filepath.Join(dir, "rendered-catalog@af13ed5"))); err != nil {
		t.Fatal(err)
	}
	return cfg, committed
}

func TestDriftRealCatalog(t *testing.T) {
	cfg, committed := zncSetup(t)
	opts := testOptions(t)
	ds, err := Drift(context.Background(), cfg, committed, opts)
	if err != nil || len(ds) != 0 {
		t.Fatalf("the committed catalog (rendered by opm) drifts: %v %v", err, ds)
	}

	// Change one byte of one file, add a stray file, remove another package.
	file := filepath.Join(committed, "catalog", "hive-operator", "index.yaml")
	makeWritable(t, filepath.Join(committed, "catalog"))
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "defaultChannel: stable")
	data[i+len("defaultChannel: s")] = 'S'
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(committed, "catalog", "hive-operator", "notes.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(committed, "catalog", "secret-operator")); err != nil {
		t.Fatal(err)
	}
	ds, err = Drift(context.Background(), cfg, committed, opts)
	if err != nil || len(ds) != 3 {
		t.Fatalf("want 3 drift diagnostics, got %v %v", err, ds)
	}
	changed := ds[0]
	wantLine := strings.Count(string(data[:i]), "\n") + 1
	if changed.Rule != "render-drift" || changed.Line != wantLine || changed.Hint != "run catalogbot render and commit the result" ||
		!strings.HasSuffix(changed.File, "catalog/hive-operator/index.yaml") {
		t.Errorf("diagnostic: %+v", changed)
	}
	for _, s := range []string{"--- committed/hive-operator/index.yaml", "+++ rendered/hive-operator/index.yaml",
		"\n-defaultChannel: sSable\n+defaultChannel: stable\n", "@@ -"} {
		if !strings.Contains(changed.Message, s) {
			t.Errorf("message lacks %q:\n%s", s, changed.Message)
		}
	}
	if !strings.Contains(ds[1].Message, "notes.txt is not rendered from the references") ||
		!strings.Contains(ds[2].Message, "secret-operator/index.yaml is missing") {
		t.Errorf("extra/missing: %s\n%s", ds[1].Message, ds[2].Message)
	}
	t.Log(changed.Message)
}

func makeWritable(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := os.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(p, mode)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The references drift gate reads the committed catalog as every reader of a catalog does
// (filetree.ListCatalog): a symbolic link and a name differing from another only in case are refused,
// naming them, instead of being followed or compared.
func TestDriftRefusesWhatTheLoaderRefuses(t *testing.T) {
	base := t.TempDir()
	committed, rendered := filepath.Join(base, "committed", "cat"), filepath.Join(base, "rendered", "cat")
	for _, dir := range []string{filepath.Join(committed, "foo"), filepath.Join(rendered, "foo")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "index.yaml"), []byte("schema: olm.package\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("index.yaml", filepath.Join(committed, "foo", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(committed, "foo", "INDEX.yaml"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := compareTrees(committed, rendered, diag.Dir{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, d.Rule+" "+d.File)
	}
	if want := []string{"catalog-file-refused cat/foo/index.yaml", "catalog-file-refused cat/foo/link.yaml"}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("diagnostics %q, want %q", got, want)
	}
}
