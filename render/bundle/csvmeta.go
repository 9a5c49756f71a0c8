package bundle

import (
	"encoding/json"
	"fmt"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/render/bundle/internal/kubetypes"
)

// csvMetadataValue is the value of an olm.csv.metadata property: the parts of a CSV a catalog shows
// without the whole manifest. Field names, order and types are the wire format.
type csvMetadataValue struct {
	Annotations               map[string]string                      `json:"annotations,omitempty"`
	APIServiceDefinitions     kubetypes.OLMAPIServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions kubetypes.OLMCustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                                 `json:"description,omitempty"`
	DisplayName               string                                 `json:"displayName,omitempty"`
	InstallModes              []kubetypes.OLMInstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                               `json:"keywords,omitempty"`
	Labels                    map[string]string                      `json:"labels,omitempty"`
	Links                     []kubetypes.OLMAppLink                 `json:"links,omitempty"`
	Maintainers               []kubetypes.OLMMaintainer              `json:"maintainers,omitempty"`
	Maturity                  string                                 `json:"maturity,omitempty"`
	MinKubeVersion            string                                 `json:"minKubeVersion,omitempty"`
	NativeAPIs                []kubetypes.MetaGroupVersionKind       `json:"nativeAPIs,omitempty"`
	Provider                  kubetypes.OLMAppLink                   `json:"provider,omitempty"`
}

// toCSVMetadata replaces the olm.bundle.object properties by one olm.csv.metadata property, as
// `opm render --migrate-level bundle-object-to-csv-metadata` does: only for a bundle with an image, and
// not at all when it already has an olm.csv.metadata property.
func (p *parsed) toCSVMetadata(props []catalog.Property) ([]catalog.Property, error) {
	if p.image == "" {
		return props, nil
	}
	kept, hasMetadata := withoutBundleObjects(props)
	if hasMetadata {
		return props, nil
	}
	var csv kubetypes.ClusterServiceVersion
	if err := json.Unmarshal(p.csvManifest.json, &csv); err != nil {
		return nil, fmt.Errorf("%s: reading ClusterServiceVersion for olm.csv.metadata: %w", p.csv.file, err)
	}
	md, err := csvMetadataOf(&csv)
	if err != nil {
		return nil, err
	}
	return append(kept, md), nil
}

// withoutBundleObjects returns props without their olm.bundle.object properties, in their order, and
// whether props already hold an olm.csv.metadata property (the migration then leaves them as they are).
func withoutBundleObjects(props []catalog.Property) (kept []catalog.Property, hasMetadata bool) {
	kept = make([]catalog.Property, 0, len(props))
	for _, p := range props {
		switch p.Type {
		case catalog.PropertyCSVMetadata:
			return nil, true
		case catalog.PropertyBundleObject:
		default:
			kept = append(kept, p)
		}
	}
	return kept, false
}

// csvMetadataOf builds the olm.csv.metadata property of a ClusterServiceVersion.
func csvMetadataOf(csv *kubetypes.ClusterServiceVersion) (catalog.Property, error) {
	return build(catalog.PropertyCSVMetadata, csvMetadataValue{
		Annotations:               csv.Annotations,
		APIServiceDefinitions:     csv.Spec.APIServiceDefinitions,
		CustomResourceDefinitions: csv.Spec.CustomResourceDefinitions,
		Description:               csv.Spec.Description,
		DisplayName:               csv.Spec.DisplayName,
		InstallModes:              csv.Spec.InstallModes,
		Keywords:                  csv.Spec.Keywords,
		Labels:                    csv.Labels,
		Links:                     csv.Spec.Links,
		Maintainers:               csv.Spec.Maintainers,
		Maturity:                  csv.Spec.Maturity,
		MinKubeVersion:            csv.Spec.MinKubeVersion,
		NativeAPIs:                csv.Spec.NativeAPIs,
		Provider:                  csv.Spec.Provider,
	})
}
