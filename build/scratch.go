package build

import (
	"fmt"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// Scratch is the base name that means no base image, as FROM scratch does in a Dockerfile: the catalog
// image is the catalog layer alone, built without any registry request.
const Scratch = "scratch"

// scratchImage is an empty image for platform p.
func scratchImage(p v1.Platform) (v1.Image, error) {
	return mutate.ConfigFile(empty.Image, &v1.ConfigFile{OS: p.OS, Architecture: p.Architecture, Variant: p.Variant,
		OSVersion: p.OSVersion, RootFS: v1.RootFS{Type: "layers"}})
}

// scratch builds on no base: one image for the one platform asked (linux/amd64 when none is), or an
// index of one image per platform.
func (b *builder) scratch(want []v1.Platform) (Result, error) {
	ref := name.MustParseReference(Scratch)
	if len(want) == 0 {
		want = []v1.Platform{{OS: "linux", Architecture: "amd64"}}
	}
	if len(want) == 1 {
		base, err := scratchImage(want[0])
		if err != nil {
			return Result{}, fmt.Errorf("scratch base for %s: %w", platformString(&want[0]), err)
		}
		return b.single(base, ref, nil)
	}
	var idx v1.ImageIndex = empty.Index
	for _, p := range want {
		base, err := scratchImage(p)
		if err != nil {
			return Result{}, fmt.Errorf("scratch base for %s: %w", platformString(&p), err)
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: base, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return b.index(idx, ref, nil)
}
