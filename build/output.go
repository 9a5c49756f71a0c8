package build

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/diag"
)

// annotationRefName is the OCI annotation naming an image in a layout.
const annotationRefName = "org.opencontainers.image.ref.name"

// Output kinds for --output KIND:PATH.
const (
	OutputOCILayout = "oci-layout"
	OutputTarball   = "tarball"
)

// Output is an offline destination: an OCI image layout directory or a docker-compatible tarball.
type Output struct {
	Kind string
	Path string
}

// ParseOutput parses "oci-layout:DIR" or "tarball:FILE".
func ParseOutput(s string) (Output, error) {
	kind, p, ok := strings.Cut(s, ":")
	if !ok || p == "" || (kind != OutputOCILayout && kind != OutputTarball) {
		return Output{}, diag.UsageError(fmt.Errorf("output %q: want %s:DIR or %s:FILE", s, OutputOCILayout, OutputTarball))
	}
	return Output{Kind: kind, Path: p}, nil
}

func (o Output) String() string { return o.Kind + ":" + o.Path }

// Write writes res to the output; ref names it (the tarball's repo tag, the layout's ref.name annotation).
func (o Output) Write(ctx context.Context, res Result, ref name.Reference) error {
	switch o.Kind {
	case OutputOCILayout:
		return WriteLayout(ctx, res, o.Path, ref.String())
	case OutputTarball:
		return WriteTarball(ctx, res, ref, o.Path)
	default:
		return diag.UsageError(fmt.Errorf("output %s: unknown kind %q", o, o.Kind))
	}
}

// WriteLayout writes res as the only entry of the OCI image layout in dir (index.json is replaced, blobs
// are added), annotated with org.opencontainers.image.ref.name=refName when refName is not empty. Base
// layers are downloaded from the base's registry.
func WriteLayout(ctx context.Context, res Result, dir, refName string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write OCI layout %s: %w", dir, err)
	}
	var opts []layout.Option
	if refName != "" {
		opts = append(opts, layout.WithAnnotations(map[string]string{annotationRefName: refName}))
	}
	if res.Index != nil {
		err = p.AppendIndex(res.Index, opts...)
	} else {
		err = p.AppendImage(res.Image, opts...)
	}
	if err != nil {
		return diag.InfraError(fmt.Errorf("write OCI layout %s: %w", dir, err))
	}
	return nil
}

// WriteTarball writes res as a docker-compatible tarball (`docker load`) tagged ref. A tarball holds one
// image per tag, so a multi-arch result must have been built for exactly one platform.
func WriteTarball(ctx context.Context, res Result, ref name.Reference, file string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	img := res.Image
	if res.Index != nil {
		im, err := res.Index.IndexManifest()
		if err != nil {
			return fmt.Errorf("write tarball %s: %w", file, err)
		}
		if len(im.Manifests) != 1 {
			return diag.UsageError(fmt.Errorf("write tarball %s: a docker tarball holds one platform, the catalog image has %d; select one platform or write an %s", file, len(im.Manifests), OutputOCILayout))
		}
		if img, err = res.Index.Image(im.Manifests[0].Digest); err != nil {
			return fmt.Errorf("write tarball %s: %w", file, err)
		}
	}
	if err := tarball.WriteToFile(file, ref, img); err != nil {
		return diag.InfraError(fmt.Errorf("write tarball %s: %w", file, err))
	}
	return nil
}
