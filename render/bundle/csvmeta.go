package bundle

import (
	"encoding/json"
	"fmt"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/catalog"
)

// csvMetadataValue is the value of an olm.csv.metadata property: the parts of a CSV a catalog shows
// without the whole manifest. Field names, order and types are the wire format.
type csvMetadataValue struct {
	Annotations               map[string]string                  `json:"annotations,omitempty"`
	APIServiceDefinitions     v1alpha1.APIServiceDefinitions     `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions v1alpha1.CustomResourceDefinitions `json:"crdDescriptions,omitempty"`
	Description               string                             `json:"description,omitempty"`
	DisplayName               string                             `json:"displayName,omitempty"`
	InstallModes              []v1alpha1.InstallMode             `json:"installModes,omitempty"`
	Keywords                  []string                           `json:"keywords,omitempty"`
	Labels                    map[string]string                  `json:"labels,omitempty"`
	Links                     []v1alpha1.AppLink                 `json:"links,omitempty"`
	Maintainers               []v1alpha1.Maintainer              `json:"maintainers,omitempty"`
	Maturity                  string                             `json:"maturity,omitempty"`
	MinKubeVersion            string                             `json:"minKubeVersion,omitempty"`
	NativeAPIs                []metav1.GroupVersionKind          `json:"nativeAPIs,omitempty"`
	Provider                  v1alpha1.AppLink                   `json:"provider,omitempty"`
}

// toCSVMetadata replaces the olm.bundle.object properties by one olm.csv.metadata property, as
// `opm render --migrate-level bundle-object-to-csv-metadata` does: only for a bundle with an image, and
// not at all when it already has an olm.csv.metadata property.
func (p *parsed) toCSVMetadata(props []catalog.Property) ([]catalog.Property, error) {
	if p.image == "" {
		return props, nil
	}
	kept := make([]catalog.Property, 0, len(props))
	for _, pr := range props {
		switch pr.Type {
		case catalog.PropertyCSVMetadata:
			return props, nil
		case catalog.PropertyBundleObject:
		default:
			kept = append(kept, pr)
		}
	}
	data, err := json.Marshal(p.csvManifest.obj)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding ClusterServiceVersion: %w", p.csv.file, err)
	}
	var csv v1alpha1.ClusterServiceVersion
	if err := json.Unmarshal(data, &csv); err != nil {
		return nil, fmt.Errorf("%s: reading ClusterServiceVersion for olm.csv.metadata: %w", p.csv.file, err)
	}
	md, err := csvMetadataOf(&csv)
	if err != nil {
		return nil, err
	}
	return append(kept, md), nil
}

// csvMetadataOf builds the olm.csv.metadata property of a ClusterServiceVersion.
func csvMetadataOf(csv *v1alpha1.ClusterServiceVersion) (catalog.Property, error) {
	return build(catalog.PropertyCSVMetadata, csvMetadataValue{
		Annotations:               csv.GetAnnotations(),
		APIServiceDefinitions:     csv.Spec.APIServiceDefinitions,
		CustomResourceDefinitions: csv.Spec.CustomResourceDefinitions,
		Description:               csv.Spec.Description,
		DisplayName:               csv.Spec.DisplayName,
		InstallModes:              csv.Spec.InstallModes,
		Keywords:                  csv.Spec.Keywords,
		Labels:                    csv.GetLabels(),
		Links:                     csv.Spec.Links,
		Maintainers:               csv.Spec.Maintainers,
		Maturity:                  csv.Spec.Maturity,
		MinKubeVersion:            csv.Spec.MinKubeVersion,
		NativeAPIs:                csv.Spec.NativeAPIs,
		Provider:                  csv.Spec.Provider,
	})
}
