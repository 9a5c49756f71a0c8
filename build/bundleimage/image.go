package bundleimage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/diag"
)

// Platform is the bundle image's platform (see the package documentation).
var Platform = v1.Platform{OS: "linux", Architecture: "amd64"}

// createdBy is the image history's one entry: what the bundle Dockerfiles do.
const createdBy = "COPY manifests/ /manifests/; COPY metadata/ /metadata/ (catalogbot bundle image)"

// Build builds the bundle image of the bundle directory dir (see the package documentation), reading
// nothing outside dir.
func Build(ctx context.Context, dir string) (v1.Image, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("bundle directory %s: %w", dir, err))
	}
	defer root.Close()
	img, err := BuildFS(ctx, root.FS())
	if err != nil {
		return nil, fmt.Errorf("bundle directory %s: %w", dir, err)
	}
	return img, nil
}

// BuildFS is Build of the bundle directory fsys (its root is the bundle directory; it must report
// symbolic links as such, as os.Root's and fstest.MapFS do).
func BuildFS(ctx context.Context, fsys fs.FS) (v1.Image, error) {
	return buildFS(ctx, fsys, limits{file: MaxFileSize, total: MaxTotalSize, files: MaxFiles})
}

func buildFS(ctx context.Context, fsys fs.FS, lim limits) (v1.Image, error) {
	entries, err := list(ctx, fsys, lim)
	if err != nil {
		return nil, err
	}
	gz, annotations, err := layer(ctx, fsys, entries)
	if err != nil {
		return nil, err
	}
	lbls, err := labels(annotations)
	if err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("bundle layer: %w", err)
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: createdBy}})
	if err != nil {
		return nil, fmt.Errorf("bundle image: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("bundle image: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: epoch}
	cfg.OS, cfg.Architecture = Platform.OS, Platform.Architecture
	cfg.Config.Labels = lbls
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, fmt.Errorf("bundle image: %w", err)
	}
	if _, err := img.Digest(); err != nil {
		return nil, fmt.Errorf("bundle image: %w", err)
	}
	return img, nil
}
