package build

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/diag"
)

// RevisionLabel records the source commit of a catalog image (a config label of every image, and an
// annotation of an OCI index), as the OCI image spec's pre-defined annotation.
const RevisionLabel = "org.opencontainers.image.revision"

// ReadRevision reads the RevisionLabel of the image or index ref points at: found is false when ref does
// not exist in its registry, rev is "" when the image records no revision. An index's annotation wins;
// without one, its first image's config label is read.
func ReadRevision(ctx context.Context, ref name.Reference, opts Options) (rev string, found bool, err error) {
	ropts := opts.remoteOptions(ctx)
	desc, err := remote.Get(ref, ropts...)
	if err != nil {
		var te *transport.Error
		if errors.As(err, &te) && te.StatusCode == http.StatusNotFound {
			return "", false, nil
		}
		return "", false, diag.InfraError(fmt.Errorf("read %s: %w", ref, err))
	}
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, err := desc.ImageIndex()
		if err != nil {
			return "", true, diag.InfraError(fmt.Errorf("read index %s: %w", ref, err))
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return "", true, diag.InfraError(fmt.Errorf("read index %s: %w", ref, err))
		}
		if r := im.Annotations[RevisionLabel]; r != "" {
			return r, true, nil
		}
		for _, d := range im.Manifests {
			if d.MediaType.IsImage() {
				if img, err = idx.Image(d.Digest); err != nil {
					return "", true, diag.InfraError(fmt.Errorf("read %s of index %s: %w", d.Digest, ref, err))
				}
				break
			}
		}
		if img == nil {
			return "", true, nil
		}
	} else {
		if img, err = desc.Image(); err != nil {
			return "", true, diag.InfraError(fmt.Errorf("read image %s: %w", ref, err))
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return "", true, diag.InfraError(fmt.Errorf("read config of %s: %w", ref, err))
	}
	return cfg.Config.Labels[RevisionLabel], true, nil
}
