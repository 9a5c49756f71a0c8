package images

import (
	"fmt"

	"github.com/catalogbot/catalogbot/catalog"
)

// Ref is one use of an image reference: where it is written and in which bundle field.
type Ref struct {
	Image   string
	File    string
	Line    int
	Package string
	Bundle  string
	// Field names the use inside the bundle: "image", "relatedImages[NAME]" ("relatedImages[#INDEX]" when
	// the entry has no name) or "reference" for references outside bundles.
	Field string
}

// RefsFromCatalog lists the bundle images and related images of every bundle, at the bundle's position
// (its file under c.Dir).
// Empty images (bundles carrying olm.bundle.object have none) are skipped, and so is a related image
// equal to its bundle's own image (opm lists the bundle image among relatedImages): it is the same use.
func RefsFromCatalog(c *catalog.Catalog) []Ref {
	var refs []Ref
	for _, b := range c.Bundles {
		use := func(image, field string) {
			refs = append(refs, Ref{Image: image, File: c.Dir.File(b.Pos.File), Line: b.Pos.Line, Package: b.Package, Bundle: b.Name, Field: field})
		}
		if b.Image != "" {
			use(b.Image, "image")
		}
		seen := map[catalog.RelatedImage]bool{}
		for i, ri := range b.RelatedImages {
			if ri.Image == "" || ri.Image == b.Image || seen[ri] {
				continue
			}
			seen[ri] = true
			use(ri.Image, relatedField(i, ri.Name))
		}
	}
	return refs
}

func relatedField(i int, name string) string {
	if name == "" {
		return fmt.Sprintf("relatedImages[#%d]", i)
	}
	return "relatedImages[" + name + "]"
}
