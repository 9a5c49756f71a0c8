package build

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/diag"
)

// Push publishes res to target and returns the digest reference it is at. Everything is written by digest
// first (repo@sha256:..., children before the index), and only then is the tag moved by one manifest PUT of
// that same digest, so the tag never points at an incompletely pushed image. Base layers from the same
// registry are cross-repository mounted, blobs already present are skipped; only the catalog layer and
// the configs are uploaded. A digest target must equal the result's digest.
func Push(ctx context.Context, res Result, target name.Reference, opts Options) (name.Digest, error) {
	h, err := res.Digest()
	if err != nil {
		return name.Digest{}, fmt.Errorf("push to %s: compute digest: %w", target, err)
	}
	byDigest := target.Context().Digest(h.String())
	if d, ok := target.(name.Digest); ok && d.DigestStr() != h.String() {
		return name.Digest{}, diag.UsageError(fmt.Errorf("push to %s: the catalog image is %s", target, h))
	}
	ropts := opts.remoteOptions(ctx)
	if res.Index != nil {
		err = remote.WriteIndex(byDigest, res.Index, ropts...)
	} else {
		err = remote.Write(byDigest, res.Image, ropts...)
	}
	if err != nil {
		return name.Digest{}, diag.InfraError(fmt.Errorf("push %s: %w", byDigest, err))
	}
	tag, ok := target.(name.Tag)
	if !ok {
		return byDigest, nil
	}
	if opts.BeforeTag != nil {
		if err := opts.BeforeTag(ctx); err != nil {
			return name.Digest{}, fmt.Errorf("not moving tag %s to %s (the image is pushed by digest): %w", tag, h, err)
		}
	}
	if err := remote.Tag(tag, res.taggable(), ropts...); err != nil {
		return name.Digest{}, diag.InfraError(fmt.Errorf("move tag %s to %s (the image is pushed by digest): %w", tag, h, err))
	}
	return byDigest, nil
}
