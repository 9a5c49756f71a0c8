package build

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// writeTree creates files (slash paths; a trailing slash makes an empty directory) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if strings.HasSuffix(rel, "/") {
			if err := os.MkdirAll(p, 0o700); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var longName = strings.Repeat("very-long-directory-name/", 6) + "catalog.json"

func sampleTree(t *testing.T) string {
	return writeTree(t, map[string]string{
		"a/b.yaml":   "b\n",
		"a-c.yaml":   "ac\n",
		"z/empty/":   "",
		"pkg/x.json": `{"schema":"olm.package","name":"x"}`,
		longName:     "{}",
		"exec.sh":    "#!/bin/sh\n",
	})
}

func TestCatalogLayerHeadersAreNormalizedAndSorted(t *testing.T) {
	dir := sampleTree(t)
	if err := os.Chmod(filepath.Join(dir, "exec.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	epoch := time.Unix(1700000000, 0)
	gz, err := CatalogLayer(t.Context(), dir, epoch)
	if err != nil {
		t.Fatal(err)
	}
	// gzip header: no name, comment or extra field, MTIME 0.
	if gz[3] != 0 || !bytes.Equal(gz[4:8], []byte{0, 0, 0, 0}) {
		t.Errorf("gzip header flags %#x mtime % x: want no optional fields and mtime 0", gz[3], gz[4:8])
	}
	var names []string
	for _, h := range tarHeaders(t, gz) {
		names = append(names, h.Name)
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s owned by %d:%d (%q:%q), want 0:0", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
		}
		if !h.ModTime.Equal(epoch) {
			t.Errorf("%s mtime %s, want %s", h.Name, h.ModTime, epoch)
		}
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			wantMode = 0o755
		} else if h.Typeflag != tar.TypeReg {
			t.Errorf("%s has type %c, want only files and directories", h.Name, h.Typeflag)
		}
		if h.Mode != wantMode {
			t.Errorf("%s mode %o, want %o", h.Name, h.Mode, wantMode)
		}
	}
	want := []string{
		"configs/", "configs/a/", "configs/a-c.yaml", "configs/a/b.yaml", "configs/exec.sh", "configs/pkg/",
		"configs/pkg/x.json",
	}
	dirs := "configs"
	for _, part := range strings.Split(longName, "/") {
		dirs += "/" + part
		if strings.HasSuffix(part, ".json") {
			want = append(want, dirs)
		} else {
			want = append(want, dirs+"/")
		}
	}
	want = append(want, "configs/z/", "configs/z/empty/")
	if !slices.Equal(names, want) {
		t.Errorf("entries:\n got %q\nwant %q", names, want)
	}
	if !slices.IsSortedFunc(names, func(a, b string) int {
		return strings.Compare(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
	}) {
		t.Errorf("entries are not sorted by path: %q", names)
	}
}

func TestCatalogLayerIsReproducible(t *testing.T) {
	epoch := time.Unix(0, 0)
	a, err := CatalogLayer(t.Context(), sampleTree(t), epoch)
	if err != nil {
		t.Fatal(err)
	}
	other := sampleTree(t) // same content, different directory, different file times
	if err := os.Chtimes(filepath.Join(other, "a-c.yaml"), time.Now(), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	b, err := CatalogLayer(t.Context(), other, epoch)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(a) != sha256.Sum256(b) {
		t.Error("two layers of the same content differ")
	}
	if err := os.WriteFile(filepath.Join(other, "a-c.yaml"), []byte("aC\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := CatalogLayer(t.Context(), other, epoch)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(a) == sha256.Sum256(c) {
		t.Error("changing one byte left the layer unchanged")
	}
	d, err := CatalogLayer(t.Context(), sampleTree(t), time.Unix(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(a) == sha256.Sum256(d) {
		t.Error("changing the epoch left the layer unchanged")
	}
}

func TestCatalogLayerRefusesSymlinks(t *testing.T) {
	outside := writeTree(t, map[string]string{"secret.txt": "do not copy\n"})
	for _, tc := range []struct{ name, link, target string }{
		{"file link out of the dir", "pkg/evil.yaml", filepath.Join(outside, "secret.txt")},
		{"file link inside the dir", "pkg/alias.json", "x.json"},
		{"directory link", "linked", outside},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sampleTree(t)
			link := filepath.Join(dir, filepath.FromSlash(tc.link))
			if err := os.Symlink(tc.target, link); err != nil {
				t.Fatal(err)
			}
			_, err := CatalogLayer(t.Context(), dir, time.Unix(0, 0))
			if !errors.Is(err, ErrSymlink) {
				t.Fatalf("err = %v, want ErrSymlink", err)
			}
			if !strings.Contains(err.Error(), link) {
				t.Errorf("error %q does not name %s", err, link)
			}
			if diag.CategoryOf(err) != diag.Invalid {
				t.Errorf("category %s, want invalid", diag.CategoryOf(err))
			}
		})
	}
}

// The build takes the catalog's files as the loader lists them (filetree.ListCatalog): names that differ
// only in case or by Unicode forms, and special files, are refused as the check refuses them, naming them;
// .indexignore'd files are in the image, as opm's image holds them.
func TestCatalogLayerRefusesWhatTheCheckRefuses(t *testing.T) {
	for _, tc := range []struct{ name, twin, want string }{
		{"case", "pkg/X.json", "differs from pkg/X.json only in case"},
		{"fullwidth", "pkg/\uff58.json", "only in case or Unicode form"},
		{"look-alike", "pkg/\u0445.json", ""}, // a Cyrillic name with a Latin extension
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := sampleTree(t)
			if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(tc.twin)), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := CatalogLayer(t.Context(), dir, time.Unix(0, 0))
			if err == nil || diag.CategoryOf(err) != diag.Invalid || !strings.Contains(err.Error(), "pkg/") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (category %s), want a refusal: %s", err, diag.CategoryOf(err), tc.want)
			}
		})
	}
	dir := sampleTree(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pkg", "pipe.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CatalogLayer(t.Context(), dir, time.Unix(0, 0)); err == nil || diag.CategoryOf(err) != diag.Invalid || !strings.Contains(err.Error(), "named pipe") {
		t.Fatalf("err = %v, want a refused named pipe", err)
	}
	dir = writeTree(t, map[string]string{"pkg/.indexignore": "notes.md\n", "pkg/notes.md": "hi\n", "pkg/x.json": "{}"})
	layer, err := CatalogLayer(t.Context(), dir, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range tarHeaders(t, layer) {
		names = append(names, h.Name)
	}
	if !slices.Contains(names, "configs/pkg/notes.md") || !slices.Contains(names, "configs/pkg/.indexignore") {
		t.Errorf("layer holds %q, want the ignored file and the .indexignore", names)
	}
}

func TestCatalogLayerMissingDirIsUsageError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := CatalogLayer(t.Context(), missing, time.Unix(0, 0))
	if err == nil || !strings.Contains(err.Error(), missing) || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("err = %v (category %s), want a usage error naming %s", err, diag.CategoryOf(err), missing)
	}
}

func TestEpochFromEnv(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	got, err := EpochFromEnv()
	if err != nil || got.Unix() != 1700000000 {
		t.Fatalf("EpochFromEnv() = %v, %v; want 1700000000", got, err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if _, err := EpochFromEnv(); err == nil || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("EpochFromEnv() with a bad value: err = %v, want a usage error", err)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "")
	if got, err := EpochFromEnv(); err != nil || got.Unix() != 0 {
		t.Fatalf("EpochFromEnv() unset = %v, %v; want the Unix epoch", got, err)
	}
}

// tarHeaders lists the entry headers of a gzip-compressed tar layer.
func tarHeaders(t *testing.T, gz []byte) []*tar.Header {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var hs []*tar.Header
	for {
		h, err := tr.Next()
		if err != nil {
			return hs
		}
		hs = append(hs, h)
	}
}
