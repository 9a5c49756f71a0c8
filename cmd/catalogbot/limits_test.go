package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int64{"1048576": 1 << 20, "64MiB": 64 << 20, "2 GiB": 2 << 30, "10KB": 10000, "5B": 5} {
		var b byteSize
		if err := b.Set(in); err != nil || int64(b) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-5", "1.5GiB", "lots", "9999999999GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("Set(%q) accepted %d", in, b)
		}
	}
}

// The nearest .catalogbot.yaml up to the repository's top decides the limits; flags override it; a broken
// one is an error, never silently the defaults.
func TestLimitsFromConfigAndFlags(t *testing.T) {
	repo := t.TempDir()
	cat := filepath.Join(repo, "catalog", "etcd")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(s string) {
		if err := os.WriteFile(filepath.Join(repo, ".catalogbot.yaml"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nlimits:\n  maxFileBytes: 1000\n  maxDiagnosticsPerRule: 5\n")
	cfg, err := (&repoSetup{}).configFor(cat)
	if err != nil || cfg == nil {
		t.Fatalf("configFor: %v, %v", cfg, err)
	}
	f := limitFlags{perRule: 7}
	l := f.limits(cfg)
	if l.MaxFileBytes != 1000 || l.MaxPerRule != 7 || l.MaxTotalBytes != 0 {
		t.Fatalf("limits %+v: want the file's maxFileBytes and the flag's per-rule limit", l)
	}
	write("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nlimits:\n  maxFileBytes: -1\n")
	if _, err := (&repoSetup{}).configFor(cat); err == nil {
		t.Fatal("a negative limit must be an error")
	}
	if err := os.Remove(filepath.Join(repo, ".catalogbot.yaml")); err != nil {
		t.Fatal(err)
	}
	if cfg, err := (&repoSetup{}).configFor(cat); cfg != nil || err != nil {
		t.Fatalf("no config up to the repository's top: got %v, %v", cfg, err)
	}
}

// A command resolves the repository's configuration once: looking up the configuration of a catalog
// directory under it (validate's limits and policy) uses what resolveRepo read, not the file again.
func TestRepoConfigResolvedOnce(t *testing.T) {
	repo := t.TempDir()
	cat := filepath.Join(repo, "catalog", "etcd")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(repo, ".catalogbot.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nlimits:\n  maxFileBytes: 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	setup, err := resolveRepo(repo)
	if err != nil {
		t.Fatal(err)
	}
	if l := setup.layout; l.Templates || len(l.Catalogs) != 1 || l.Catalogs[0].Dir != "catalog" {
		t.Fatalf("layout %+v, want the layout of one catalog", l)
	}
	// changed after the command read it: the command goes on with what it read
	if err := os.WriteFile(file, []byte("limits: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := setup.configFor(cat)
	if err != nil || cfg != setup.cfg {
		t.Fatalf("configFor read the file again: %v, %v", cfg, err)
	}
	if _, err := (&repoSetup{}).configFor(cat); err == nil {
		t.Fatal("without the resolved setup the file is read (and is now broken)")
	}
}

// A verb given no DIR takes the repository's catalog.dir from the configuration the command resolved,
// not from the file again.
func TestDefaultCatalogDirResolvedOnce(t *testing.T) {
	repo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(repo, "fbc", "etcd"), 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, repo, "init", "-q")
	file := filepath.Join(repo, ".catalogbot.yaml")
	if err := os.WriteFile(file, []byte("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\ncatalog:\n  dir: fbc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	t.Cleanup(func() { _ = os.Chdir(wd) })
	if err := os.Chdir(repo); err != nil {
		t.Fatal(err)
	}
	setup, err := resolveRepo(".")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("catalog: [broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if dir, err := setup.catalogDir(t.Context(), ""); err != nil || dir != "fbc" {
		t.Fatalf("catalogDir = %q, %v; want fbc, from the configuration resolved before the file broke", dir, err)
	}
	if dir, err := setup.catalogDir(t.Context(), "elsewhere"); err != nil || dir != "elsewhere" {
		t.Fatalf("catalogDir with DIR = %q, %v; want DIR", dir, err)
	}
	if _, err := (&repoSetup{}).catalogDir(t.Context(), ""); err == nil {
		t.Fatal("without the resolved setup the file is read (and is now broken)")
	}
}
