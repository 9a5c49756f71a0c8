package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
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
		oci, err := build.TarHasFile(archive, "index.json")
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
		if err := build.Untar(archive, dir, maxLayoutArchive); err != nil {
			cleanup()
			return res, func() {}, diag.UsageError(fmt.Errorf("catalog archive %s: %w", archive, err))
		}
	}
	res, err = build.ReadLayout(dir)
	if err != nil {
		cleanup()
		return res, func() {}, diag.UsageError(fmt.Errorf("catalog archive %s: %w", archive, err))
	}
	return res, cleanup, nil
}

// smokePushOptions are the registry options of the push: the docker config's credentials, a deadline
// per request.
func smokePushOptions() build.Options {
	return build.Options{Transport: registry.Transport(smokePushTimeout)}
}
