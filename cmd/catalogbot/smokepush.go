package main

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/registry"
)

// smokePushTimeout bounds each registry request of the push of a local catalog for OLM v1.
const smokePushTimeout = 2 * time.Minute

// maxLayoutArchive bounds what an OCI layout archive may unpack to (a catalog image is tens of MiB).
const maxLayoutArchive = 8 << 30

// pushSmokeCatalog pushes the catalog image of archive (an OCI layout directory or tar, or a docker-save
// tar, as --catalog-archive takes) by digest to PREFIX/catalog, where catalogd can pull it for an OLM v1
// install, and returns that reference. prefix means what pr's --smoke-registry means
// (pipeline.CheckSmokeRegistry).
func pushSmokeCatalog(ctx context.Context, archive, prefix string, opts build.Options) (name.Digest, error) {
	if err := pipeline.CheckSmokeRegistry(prefix); err != nil {
		return name.Digest{}, err
	}
	repo, err := name.NewRepository(strings.TrimSuffix(prefix, "/")+"/catalog", name.StrictValidation)
	if err != nil {
		return name.Digest{}, diag.UsageError(fmt.Errorf("--registry %q: %w", prefix, err))
	}
	res, cleanup, err := readCatalogArchive(archive)
	if err != nil {
		return name.Digest{}, err
	}
	defer cleanup()
	dig, err := res.Digest()
	if err != nil {
		return name.Digest{}, fmt.Errorf("catalog archive %s: %w", archive, err)
	}
	d, err := build.Push(ctx, res, repo.Digest(dig.String()), opts)
	if err != nil {
		return name.Digest{}, fmt.Errorf("push catalog archive %s for OLM v1: %w", archive, err)
	}
	return d, nil
}

// readCatalogArchive reads the one image (or index) of an OCI layout directory or tar, or the one image of
// a docker-save tar. cleanup removes what it unpacked once the image has been used.
func readCatalogArchive(archive string) (res build.Result, cleanup func(), err error) {
	cleanup = func() {}
	fi, err := os.Stat(archive)
	if err != nil {
		return res, cleanup, diag.UsageError(fmt.Errorf("catalog archive: %w", err))
	}
	dir := archive
	if !fi.IsDir() {
		oci, err := tarHas(archive, "index.json")
		if err != nil {
			return res, cleanup, diag.UsageError(fmt.Errorf("catalog archive %s: %w", archive, err))
		}
		if !oci { // docker-save: one image
			img, err := tarball.ImageFromPath(archive, nil)
			if err != nil {
				return res, cleanup, diag.UsageError(fmt.Errorf("catalog archive %s: neither an OCI layout nor a docker-save tar of one image: %w", archive, err))
			}
			return build.Result{Image: img}, cleanup, nil
		}
		if dir, err = os.MkdirTemp("", "catalogbot-smoke-layout-"); err != nil {
			return res, cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		if err := untar(archive, dir); err != nil {
			cleanup()
			return res, func() {}, diag.UsageError(fmt.Errorf("catalog archive %s: %w", archive, err))
		}
	}
	res, err = layoutImage(dir)
	if err != nil {
		cleanup()
		return res, func() {}, diag.UsageError(fmt.Errorf("catalog archive %s: %w", archive, err))
	}
	return res, cleanup, nil
}

// layoutImage is the only image or index an OCI layout holds.
func layoutImage(dir string) (build.Result, error) {
	ii, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return build.Result{}, fmt.Errorf("OCI layout: %w", err)
	}
	m, err := ii.IndexManifest()
	if err != nil {
		return build.Result{}, fmt.Errorf("OCI layout index.json: %w", err)
	}
	if len(m.Manifests) != 1 {
		return build.Result{}, fmt.Errorf("OCI layout holds %d images, want one catalog image", len(m.Manifests))
	}
	desc := m.Manifests[0]
	if desc.MediaType.IsIndex() {
		idx, err := ii.ImageIndex(desc.Digest)
		return build.Result{Index: idx}, err
	}
	img, err := ii.Image(desc.Digest)
	return build.Result{Image: img}, err
}

// tarHas reports whether the tar file holds the regular file want at its top.
func tarHas(file, want string) (bool, error) {
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

// untar unpacks the directories and regular files of the tar file into dir: names must stay inside it,
// and at most maxLayoutArchive bytes are written.
func untar(file, dir string) error {
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
			if total += h.Size; total > maxLayoutArchive {
				return fmt.Errorf("unpacks to more than %d bytes", int64(maxLayoutArchive))
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := writeEntry(dst, tr); err != nil {
				return fmt.Errorf("tar entry %q: %w", h.Name, err)
			}
		default:
			return fmt.Errorf("tar entry %q is neither a file nor a directory", h.Name)
		}
	}
}

func writeEntry(dst string, r io.Reader) error {
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

// smokePushOptions are the registry options of the push: the docker config's credentials, a deadline
// per request.
func smokePushOptions() build.Options {
	return build.Options{Transport: registry.Transport(smokePushTimeout)}
}
