package images

import (
	"context"
	"slices"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// checkPlatforms fetches the manifest (which also proves the image exists) and checks that every
// required platform is provided: by an index entry, or by a single image's config.
func checkPlatforms(ctx context.Context, p *remote.Puller, ref name.Reference, required []v1.Platform) outcome {
	desc, err := p.Get(ctx, ref)
	if err != nil {
		return outcomeOf(err)
	}
	var have []v1.Platform
	switch {
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return outcomeOf(err)
		}
		im, err := idx.IndexManifest()
		if err != nil {
			return outcomeOf(err)
		}
		for _, m := range im.Manifests {
			if m.Platform != nil {
				have = append(have, *m.Platform)
			}
		}
	case desc.MediaType.IsImage():
		img, err := desc.Image()
		if err != nil {
			return outcomeOf(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return outcomeOf(err)
		}
		if pl := cf.Platform(); pl != nil {
			have = append(have, *pl)
		}
	}
	out := outcome{kind: kindOK}
	for _, req := range required {
		if !slices.ContainsFunc(have, func(h v1.Platform) bool { return h.Satisfies(req) }) {
			out.missing = append(out.missing, req.String())
		}
	}
	if len(out.missing) == 0 {
		return out
	}
	out.kind = kindPlatformMissing
	for _, h := range have {
		if h.OS != "unknown" { // attestation manifests in buildkit indexes
			out.have = append(out.have, h.String())
		}
	}
	slices.Sort(out.have)
	out.have = slices.Compact(out.have)
	return out
}
