package render

import (
	"context"
	"fmt"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// BundleImages renders single bundle images, as `opm alpha render-template` renders the images its
// templates name (bundle images only). It shares Render's registry client, limits and retries; it keeps
// no disk cache of its own (callers cache by digest).
type BundleImages struct {
	r *run
}

// NewBundleImages returns a BundleImages with opts (BaseDir, the cache and Concurrency are not used).
func NewBundleImages(opts Options) (*BundleImages, error) {
	opts.NoCache = true
	r, err := newRun(&Config{File: "."}, opts)
	if err != nil {
		return nil, err
	}
	return &BundleImages{r: r}, nil
}

// Resolve returns the manifest digest ("sha256:...") image points to: a tag is asked for, a digest taken
// as written.
func (b *BundleImages) Resolve(ctx context.Context, image string) (string, error) {
	ref, err := parseImage(image)
	if err != nil {
		return "", err
	}
	if err := b.r.allow.check(ref); err != nil {
		return "", err
	}
	d, _, err := b.r.regs.resolve(ctx, ref)
	if err != nil {
		return "", fmt.Errorf("image %s: %w", image, err)
	}
	return d.DigestStr(), nil
}

// Render pulls image and renders it as a bundle whose image field is image as written, in the form
// Options.Bundle asks for. It returns the digest the image resolved to. An index image is refused.
func (b *BundleImages) Render(ctx context.Context, image string) (*catalog.Bundle, string, error) {
	ref, err := parseImage(image)
	if err != nil {
		return nil, "", err
	}
	if err := b.r.allow.check(ref); err != nil {
		return nil, "", err
	}
	d, desc, err := b.r.regs.resolve(ctx, ref)
	if err != nil {
		return nil, "", fmt.Errorf("image %s: %w", image, err)
	}
	p, err := b.r.regs.image(ctx, d, desc, b.r.lim)
	if err != nil {
		return nil, "", fmt.Errorf("image %s: %w", image, err)
	}
	if p.kind != BundleImage {
		return nil, "", ruleErr("image-unusable", "a template names bundle images",
			diag.InvalidError(fmt.Errorf("image %s is an index image, not a bundle image", image)))
	}
	bn, err := b.r.opts.Bundle.Render(ctx, p.fsys, image)
	if err != nil {
		return nil, "", fmt.Errorf("bundle image %s: %w", image, err)
	}
	return bn, d.DigestStr(), nil
}
