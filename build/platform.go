package build

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/catalogbot/catalogbot/diag"
)

// ParsePlatforms parses "os/arch[/variant]" strings (as `--platform linux/amd64,linux/arm64` gives them).
func ParsePlatforms(specs []string) ([]v1.Platform, error) {
	var out []v1.Platform
	for _, s := range specs {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil {
			return nil, diag.UsageError(fmt.Errorf("platform %q: %w", s, err))
		}
		out = append(out, *p)
	}
	return out, nil
}

// single builds on a single-platform base; every requested platform must be the base's.
func (b *builder) single(base v1.Image, ref name.Reference, want []v1.Platform) (Result, error) {
	cfg, err := base.ConfigFile()
	if err != nil {
		return Result{}, diag.InfraError(fmt.Errorf("read config of base image %s: %w", ref, err))
	}
	p := cfg.Platform()
	for _, w := range want {
		if p == nil || !p.Satisfies(w) {
			return Result{}, diag.UsageError(fmt.Errorf("platform %s requested, but base image %s is a single-platform image for %s", w, ref, platformString(p)))
		}
	}
	img, layer, err := b.image(base)
	if err != nil {
		return Result{}, diag.InfraError(fmt.Errorf("build on base image %s: %w", ref, err))
	}
	res := Result{Image: img, Layer: layer}
	if p != nil {
		res.Platforms = []v1.Platform{*p}
	}
	return res, nil
}

// baseManifest is one platform image of a multi-arch base.
type baseManifest struct {
	desc     v1.Descriptor
	platform v1.Platform
}

// index builds on a multi-arch base: the catalog layer goes onto every selected platform image and the
// result is an index of the same media type, in the base's order. Attestation manifests are dropped: they
// describe the base images, not the catalog images.
func (b *builder) index(base v1.ImageIndex, ref name.Reference, want []v1.Platform) (Result, error) {
	im, err := base.IndexManifest()
	if err != nil {
		return Result{}, diag.InfraError(fmt.Errorf("read base index %s: %w", ref, err))
	}
	var all []baseManifest
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() || d.Annotations["vnd.docker.reference.type"] == "attestation-manifest" {
			continue
		}
		p, err := descPlatform(base, d)
		if err != nil {
			return Result{}, diag.InfraError(fmt.Errorf("base index %s: manifest %s: %w", ref, d.Digest, err))
		}
		if p.OS == "unknown" {
			continue
		}
		all = append(all, baseManifest{desc: d, platform: p})
	}
	selected, err := selectPlatforms(all, want, ref)
	if err != nil {
		return Result{}, err
	}
	mt, err := base.MediaType()
	if err != nil {
		return Result{}, diag.InfraError(fmt.Errorf("base index %s: %w", ref, err))
	}
	res := Result{}
	var adds []mutate.IndexAddendum
	for _, m := range selected {
		img, err := base.Image(m.desc.Digest)
		if err != nil {
			return Result{}, diag.InfraError(fmt.Errorf("base index %s: image %s: %w", ref, m.platform, err))
		}
		out, layer, err := b.image(img)
		if err != nil {
			return Result{}, diag.InfraError(fmt.Errorf("build on base %s for %s: %w", ref, m.platform, err))
		}
		p := m.platform
		adds = append(adds, mutate.IndexAddendum{Add: out, Descriptor: v1.Descriptor{Platform: &p}})
		res.Layer = layer
		res.Platforms = append(res.Platforms, p)
	}
	res.Index = mutate.AppendManifests(mutate.IndexMediaType(empty.Index, mt), adds...)
	return res, nil
}

// selectPlatforms keeps the manifests matching a requested platform (all when none is requested) and fails
// naming the first requested platform the base lacks.
func selectPlatforms(all []baseManifest, want []v1.Platform, ref name.Reference) ([]baseManifest, error) {
	if len(all) == 0 {
		return nil, diag.UsageError(fmt.Errorf("base index %s holds no platform images", ref))
	}
	if len(want) == 0 {
		return all, nil
	}
	var have []string
	for _, m := range all {
		have = append(have, m.platform.String())
	}
	keep := make([]bool, len(all))
	for _, w := range want {
		found := false
		for i, m := range all {
			if m.platform.Satisfies(w) {
				keep[i], found = true, true
			}
		}
		if !found {
			return nil, diag.UsageError(fmt.Errorf("platform %s requested, but base index %s has only %s", w, ref, strings.Join(have, ", ")))
		}
	}
	var out []baseManifest
	for i, m := range all {
		if keep[i] {
			out = append(out, m)
		}
	}
	return out, nil
}

// descPlatform is the platform of an index entry, read from the image config when the entry lacks it.
func descPlatform(idx v1.ImageIndex, d v1.Descriptor) (v1.Platform, error) {
	if d.Platform != nil {
		return *d.Platform, nil
	}
	img, err := idx.Image(d.Digest)
	if err != nil {
		return v1.Platform{}, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return v1.Platform{}, err
	}
	if p := cfg.Platform(); p != nil {
		return *p, nil
	}
	return v1.Platform{}, fmt.Errorf("no platform in index entry or image config")
}

func platformString(p *v1.Platform) string {
	if p == nil {
		return "no declared platform"
	}
	return p.String()
}
