package build

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/diag"
)

// Result is a built catalog image: Index is set when the base is multi-arch, Image otherwise.
type Result struct {
	Image v1.Image
	Index v1.ImageIndex
	// Layer is the catalog layer (its OCI or Docker flavour, as the base's manifests are).
	Layer v1.Layer
	// Platforms are the platforms of the result, in the base's order.
	Platforms []v1.Platform
}

// Digest is the digest of the manifest (image) or index the result is pushed as.
func (r Result) Digest() (v1.Hash, error) {
	if r.Index != nil {
		return r.Index.Digest()
	}
	return r.Image.Digest()
}

// taggable is what a manifest PUT writes: the index or the image.
func (r Result) taggable() remote.Taggable {
	if r.Index != nil {
		return r.Index
	}
	return r.Image
}

// Image builds the catalog image of fbcDir on opts.Base (see Options). Base layers are not downloaded:
// the result refers to them in the base's registry, and reading them later (WriteLayout, WriteTarball, or
// Push to another registry) uses ctx, which must stay live until then.
func Image(ctx context.Context, fbcDir string, opts Options) (Result, error) {
	epoch, err := opts.epoch()
	if err != nil {
		return Result{}, err
	}
	gz, err := CatalogLayer(ctx, fbcDir, epoch)
	if err != nil {
		return Result{}, err
	}
	baseName := opts.Base
	if baseName == "" {
		baseName = DefaultBase
	}
	b := &builder{gz: gz, epoch: epoch, cmd: opts.Cmd, labels: opts.Labels, layers: map[types.MediaType]v1.Layer{}}
	if b.cmd == nil {
		b.cmd = Cmd
	}
	if baseName == Scratch {
		res, err := b.scratch(opts.Platforms)
		if err != nil {
			return Result{}, err
		}
		if _, err := res.Digest(); err != nil {
			return Result{}, fmt.Errorf("compute catalog image on scratch: %w", err)
		}
		return res, nil
	}
	baseRef, err := name.ParseReference(baseName, opts.NameOptions...)
	if err != nil {
		return Result{}, diag.UsageError(fmt.Errorf("base image %q: %w", baseName, err))
	}
	desc, err := remote.Get(baseRef, opts.remoteOptions(ctx)...)
	if err != nil {
		return Result{}, diag.InfraError(fmt.Errorf("fetch base image %s: %w", baseRef, err))
	}
	var res Result
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return Result{}, diag.InfraError(fmt.Errorf("read base index %s: %w", baseRef, err))
		}
		res, err = b.index(idx, baseRef, opts.Platforms)
		if err != nil {
			return Result{}, err
		}
	} else {
		img, err := desc.Image()
		if err != nil {
			return Result{}, diag.InfraError(fmt.Errorf("read base image %s: %w", baseRef, err))
		}
		res, err = b.single(img, baseRef, opts.Platforms)
		if err != nil {
			return Result{}, err
		}
	}
	if res.Index != nil && len(opts.Labels) > 0 {
		if mt, err := res.Index.MediaType(); err == nil && mt == types.OCIImageIndex {
			res.Index = mutate.Annotations(res.Index, opts.Labels).(v1.ImageIndex)
		}
	}
	if _, err := res.Digest(); err != nil {
		return Result{}, diag.InfraError(fmt.Errorf("compute catalog image on %s: %w", baseRef, err))
	}
	return res, nil
}

// builder turns base images into catalog images sharing one layer per layer media type.
type builder struct {
	gz     []byte
	epoch  time.Time
	cmd    []string
	labels map[string]string
	layers map[types.MediaType]v1.Layer
}

// layerFor returns the catalog layer with the layer media type matching the base manifest's.
func (b *builder) layerFor(base v1.Image) (v1.Layer, error) {
	mt, err := base.MediaType()
	if err != nil {
		return nil, err
	}
	lmt := types.DockerLayer
	if mt == types.OCIManifestSchema1 {
		lmt = types.OCILayer
	}
	if l, ok := b.layers[lmt]; ok {
		return l, nil
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(b.gz)), nil
	}, tarball.WithMediaType(lmt))
	if err != nil {
		return nil, err
	}
	b.layers[lmt] = l
	return l, nil
}

func (b *builder) image(base v1.Image) (v1.Image, v1.Layer, error) {
	layer, err := b.layerFor(base)
	if err != nil {
		return nil, nil, err
	}
	img, err := catalogImage(base, layer, b.cmd, b.labels, b.epoch)
	return img, layer, err
}
