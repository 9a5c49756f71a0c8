//go:build tools

package main

import (
	"context"
	"fmt"
	"os"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"

	"github.com/catalogbot/catalogbot/build"
)

// writeOCI writes img as the only image of the OCI layout dir, named ref for containerd and OCI
// tools, then tars the layout to dir.tar. It prints the manifest digest.
func writeOCI(ctx context.Context, img v1.Image, ref, dir string) error {
	d, err := writeOCIDigest(ctx, img, ref, dir)
	if err != nil {
		return err
	}
	fmt.Println(d)
	return nil
}

// writeOCIDigest is writeOCI returning the manifest digest instead of printing it.
func writeOCIDigest(ctx context.Context, img v1.Image, ref, dir string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return "", fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	ann := map[string]string{
		"io.containerd.image.name":          ref,
		"org.opencontainers.image.ref.name": ref,
	}
	if err := p.AppendImage(img, layout.WithAnnotations(ann)); err != nil {
		return "", fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	if err := tarDir(dir, dir+".tar"); err != nil {
		return "", err
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return d.String(), nil
}

// tarDir writes the files of dir into file (see build.TarDir).
func tarDir(dir, file string) error { return build.TarDir(dir, file) }

// readLayoutImage reads the only image of an OCI layout directory.
func readLayoutImage(dir string) (v1.Image, error) {
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, fmt.Errorf("OCI layout %s: %w", dir, err)
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("OCI layout %s: want one image, found %d", dir, len(m.Manifests))
	}
	return idx.Image(m.Manifests[0].Digest)
}
