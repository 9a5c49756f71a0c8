package bundle

import (
	"encoding/json"
	"fmt"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/render/bundle/internal/kubetypes"
)

// CSVOf returns the ClusterServiceVersion of a rendered bundle in opm's default form: the first of its
// olm.bundle.object properties whose object is of kind ClusterServiceVersion, as JSON. It returns nil
// when the bundle has no such object (a bundle already in the olm.csv.metadata form has none).
func CSVOf(b *catalog.Bundle) ([]byte, error) {
	for i, p := range b.Properties {
		if p.Type != catalog.PropertyBundleObject {
			continue
		}
		var obj catalog.BundleObject
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return nil, fmt.Errorf("bundle %q: property %d (olm.bundle.object): %w", b.Name, i, err)
		}
		data, err := k8syaml.ToJSON(obj.Data)
		if err != nil {
			return nil, fmt.Errorf("bundle %q: property %d (olm.bundle.object): %w", b.Name, i, err)
		}
		var o object
		if err := json.Unmarshal(data, &o); err != nil {
			continue
		}
		if o.kind() == kindCSV {
			return data, nil
		}
	}
	return nil, nil
}

// ToCSVMetadata returns b as `--migrate-level bundle-object-to-csv-metadata` leaves it: its
// olm.bundle.object properties replaced by one olm.csv.metadata property built from its
// ClusterServiceVersion, appended after the other properties. Like opm, it returns b unchanged when b has
// no image, no ClusterServiceVersion object, or already an olm.csv.metadata property. b is not modified.
func ToCSVMetadata(b *catalog.Bundle) (*catalog.Bundle, error) {
	if b.Image == "" {
		return b, nil
	}
	csvJSON, err := CSVOf(b)
	if err != nil || csvJSON == nil {
		return b, err
	}
	kept, hasMetadata := withoutBundleObjects(b.Properties)
	if hasMetadata {
		return b, nil
	}
	var csv kubetypes.ClusterServiceVersion
	if err := json.Unmarshal(csvJSON, &csv); err != nil {
		return nil, fmt.Errorf("bundle %q: reading its ClusterServiceVersion for olm.csv.metadata: %w", b.Name, err)
	}
	md, err := csvMetadataOf(&csv)
	if err != nil {
		return nil, fmt.Errorf("bundle %q: %w", b.Name, err)
	}
	out := *b
	out.Parsed = nil
	out.Properties = append(kept, md)
	return &out, nil
}
