package template

import (
	"context"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// Local is a Source that serves one bundle rendered from its directory (render/bundle.RenderDir, in opm's
// default form) for its image reference, as the image built from that directory renders, and every other
// reference from Next. `catalogbot release` renders a bundle that is not pushed yet this way, offline.
type Local struct {
	Image    string
	Rendered *catalog.Bundle
	Next     Source
}

// Bundle implements Source.
func (l *Local) Bundle(ctx context.Context, image string, csvMetadata bool) (*Bundle, error) {
	if image != l.Image {
		return l.Next.Bundle(ctx, image, csvMetadata)
	}
	e := &entry{Plain: l.Rendered, HeadKnown: true}
	if csv, err := bundle.CSVOf(l.Rendered); err == nil && csv != nil {
		e.Description, e.Icon = headMetadata(csv)
	}
	return e.bundleOf(csvMetadata)
}

// ReadFile reads repository file name (slash-separated) under root as templates are read: through an
// os.Root, a regular file of at most limit bytes.
func ReadFile(root, name string, limit int64) ([]byte, error) { return readCapped(root, name, limit) }

// Field is the key and value nodes of key in mapping m (nil when m is not a mapping or has no key), as
// ci.yaml is read.
func Field(m *yaml.Node, key string) (k, v *yaml.Node) { return exactField(m, key) }
