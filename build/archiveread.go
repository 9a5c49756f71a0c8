package build

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// ReadLayout is the only image or index the OCI layout directory dir holds (as WriteLayout writes one).
func ReadLayout(dir string) (Result, error) {
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return Result{}, fmt.Errorf("OCI layout: %w", err)
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return Result{}, fmt.Errorf("OCI layout index.json: %w", err)
	}
	if len(m.Manifests) != 1 {
		return Result{}, fmt.Errorf("OCI layout holds %d images, want one catalog image", len(m.Manifests))
	}
	desc := m.Manifests[0]
	if desc.MediaType.IsIndex() {
		idx, err := ii.ImageIndex(desc.Digest)
		return Result{Index: idx}, err
	}
	img, err := ii.Image(desc.Digest)
	return Result{Image: img}, err
}

// TarHasFile reports whether the tar file holds the regular file want at its top ("index.json": an OCI
// layout tar, as TarDir writes one).
func TarHasFile(file, want string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("not a tar: %w", err)
		}
		if path.Clean(strings.TrimPrefix(h.Name, "./")) == want && h.Typeflag == tar.TypeReg {
			return true, nil
		}
	}
}

// Untar unpacks the directories and regular files of the tar file into dir (TarDir's inverse): names must
// stay inside dir, no other entry type is accepted, and at most max bytes are written.
func Untar(file, dir string, max int64) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read tar: %w", err)
		}
		rel := path.Clean(strings.TrimPrefix(h.Name, "./"))
		if rel == "." {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("tar entry %q leaves the archive", h.Name)
		}
		dst := filepath.Join(dir, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if total += h.Size; total > max {
				return fmt.Errorf("unpacks to more than %d bytes", max)
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := writeNewFile(dst, tr); err != nil {
				return fmt.Errorf("tar entry %q: %w", h.Name, err)
			}
		default:
			return fmt.Errorf("tar entry %q is neither a file nor a directory", h.Name)
		}
	}
}

// writeNewFile writes r to dst, which must not exist yet (a second entry of one name is refused).
func writeNewFile(dst string, r io.Reader) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
