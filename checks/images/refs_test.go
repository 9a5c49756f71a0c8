package images

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/registry"
)

func TestRefsFromCatalog(t *testing.T) {
	c := &catalog.Catalog{Bundles: []*catalog.Bundle{
		{
			Name: "op.v1", Package: "op", Image: "quay.io/ops/op-bundle:v1",
			Pos: catalog.Pos{File: "op/catalog.yaml", Line: 12},
			RelatedImages: []catalog.RelatedImage{
				{Image: "quay.io/ops/op-bundle:v1"}, // the bundle itself, as opm renders it
				{Name: "operator", Image: "quay.io/ops/op@sha256:" + zeros},
				{Name: "operator", Image: "quay.io/ops/op@sha256:" + zeros}, // exact duplicate entry
				{Image: "quay.io/ops/proxy:v2"},
				{Name: "empty", Image: ""},
			},
		},
		// A bundle declared with olm.bundle.object and no image: nothing to check.
		{Name: "op.v0", Package: "op", Pos: catalog.Pos{File: "op/catalog.yaml", Line: 3}},
	}}
	got := RefsFromCatalog(c)
	want := []Ref{
		{Image: "quay.io/ops/op-bundle:v1", File: "op/catalog.yaml", Line: 12, Package: "op", Bundle: "op.v1", Field: "image"},
		{Image: "quay.io/ops/op@sha256:" + zeros, File: "op/catalog.yaml", Line: 12, Package: "op", Bundle: "op.v1", Field: "relatedImages[operator]"},
		{Image: "quay.io/ops/proxy:v2", File: "op/catalog.yaml", Line: 12, Package: "op", Bundle: "op.v1", Field: "relatedImages[#3]"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("RefsFromCatalog =\n%+v\nwant\n%+v", got, want)
	}
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// On a real rendered package every bundle lists its own image among relatedImages; the refs hold each
// bundle image once, every other related image, and only images that parse.
func TestRefsFromRealCatalog(t *testing.T) {
	const file = "limitador-operator/catalog.json"
	data, err := os.ReadFile(shareddata.Dir(t, "catalogs", "composed-279", file))
	if err != nil {
		t.Skipf("REAL CATALOG DATA NOT AVAILABLE: %v", err)
	}
	c := decodeBundles(t, file, data)
	refs := RefsFromCatalog(c)

	wantRefs := 0
	for _, b := range c.Bundles {
		wantRefs++
		for _, ri := range b.RelatedImages {
			if ri.Image != b.Image {
				wantRefs++
			}
		}
	}
	if len(c.Bundles) != 8 || len(refs) != wantRefs {
		t.Fatalf("%d bundles, %d refs; want 8 bundles and %d refs", len(c.Bundles), len(refs), wantRefs)
	}
	for _, r := range refs {
		if _, err := registry.ParseReference(r.Image); err != nil || r.Line < 1 || r.File != file || r.Bundle == "" || r.Package != "limitador-operator" {
			t.Errorf("ref %+v: want a valid image at a known bundle position (%v)", r, err)
		}
	}
}

// decodeBundles reads the olm.bundle blobs of a JSON-stream catalog file, with their starting lines.
func decodeBundles(t *testing.T, file string, data []byte) *catalog.Catalog {
	t.Helper()
	c := &catalog.Catalog{}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return c
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		end := int(dec.InputOffset())
		start := end - len(raw)
		var b catalog.Bundle
		if err := json.Unmarshal(raw, &b); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if b.Schema == catalog.SchemaBundle {
			b.Pos = catalog.Pos{File: file, Line: 1 + bytes.Count(data[:start], []byte("\n"))}
			c.Bundles = append(c.Bundles, &b)
		}
	}
}
