package bundle

import (
	"maps"
	"slices"
	"sort"

	"github.com/catalogbot/catalogbot/catalog"
)

// relatedImages lists, as opm does, the CSV's spec.relatedImages, then the bundle image unless it is
// already among them, then every deployment container and init container image not yet listed; sorted by
// image with opm's (unstable) sort.
func (p *parsed) relatedImages() ([]catalog.RelatedImage, error) {
	var declared []relatedImage
	if err := p.csv.decodeField("relatedImages", &declared); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []catalog.RelatedImage
	for _, ri := range declared {
		out = append(out, catalog.RelatedImage{Name: ri.Name, Image: ri.Image})
		seen[ri.Image] = true
	}
	if p.image != "" && !seen[p.image] {
		out = append(out, catalog.RelatedImage{Image: p.image})
	}
	operator, err := p.csv.operatorImages()
	if err != nil {
		return nil, err
	}
	for _, img := range slices.Sorted(maps.Keys(operator)) {
		if !seen[img] {
			out = append(out, catalog.RelatedImage{Image: img})
		}
		seen[img] = true
	}
	// sort.Slice, as opm: it is not stable beyond 12 elements, and equal images (a CSV may list one image
	// under two names) end up in the order its algorithm leaves them, which only the same sort reproduces.
	sort.Slice(out, func(i, j int) bool { return out[i].Image < out[j].Image })
	return out, nil
}
