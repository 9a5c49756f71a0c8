package bundle

import (
	"fmt"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

const (
	kindCSV = "ClusterServiceVersion"
	kindCRD = "CustomResourceDefinition"
)

// apiKey identifies an API a bundle provides or requires.
type apiKey struct {
	Group, Version, Kind, Plural string
}

func (k apiKey) String() string {
	return fmt.Sprintf("%s/%s, Kind=%s (plural %q)", k.Group, k.Version, k.Kind, k.Plural)
}

// crdDecoder is the deserializer opm decodes CRDs with: apiextensions v1 and v1beta1, no defaulting.
var crdDecoder = sync.OnceValue(func() runtime.Decoder {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	if err := apiextensionsv1beta1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(scheme).UniversalDeserializer()
})

// crdAPIs decodes one CRD object (by its apiVersion's version, as opm does; other versions provide
// nothing) and returns the APIs it serves.
func crdAPIs(m manifest) ([]apiKey, error) {
	version := m.obj.GroupVersionKind().Version
	if version != "v1" && version != "v1beta1" {
		return nil, nil
	}
	data, err := m.obj.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%s: encoding CustomResourceDefinition: %w", m.file, err)
	}
	var keys []apiKey
	if version == "v1" {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if _, _, err := crdDecoder().Decode(data, nil, crd); err != nil {
			return nil, fmt.Errorf("%s: decoding v1 CustomResourceDefinition: %w", m.file, err)
		}
		for _, v := range crd.Spec.Versions {
			keys = append(keys, apiKey{crd.Spec.Group, v.Name, crd.Spec.Names.Kind, crd.Spec.Names.Plural})
		}
		return keys, nil
	}
	crd := &apiextensionsv1beta1.CustomResourceDefinition{}
	if _, _, err := crdDecoder().Decode(data, nil, crd); err != nil {
		return nil, fmt.Errorf("%s: decoding v1beta1 CustomResourceDefinition: %w", m.file, err)
	}
	for _, v := range crd.Spec.Versions {
		keys = append(keys, apiKey{crd.Spec.Group, v.Name, crd.Spec.Names.Kind, crd.Spec.Names.Plural})
	}
	if crd.Spec.Version != "" {
		keys = append(keys, apiKey{crd.Spec.Group, crd.Spec.Version, crd.Spec.Names.Kind, crd.Spec.Names.Plural})
	}
	return keys, nil
}

// providedAPIs are the APIs of the bundle's CRDs and the CSV's owned API services.
func (p *parsed) providedAPIs() (map[apiKey]struct{}, error) {
	provided := map[apiKey]struct{}{}
	for _, k := range p.crdKeys {
		provided[k] = struct{}{}
	}
	owned, err := p.csv.definitions("apiservicedefinitions")
	if err != nil {
		return nil, err
	}
	for _, d := range owned.Owned {
		provided[apiKey{d.Group, d.Version, d.Kind, d.Name}] = struct{}{}
	}
	return provided, nil
}

// requiredAPIs are the CSV's required CRDs (named plural.group) and required API services.
func (p *parsed) requiredAPIs() (map[apiKey]struct{}, error) {
	required := map[apiKey]struct{}{}
	crds, err := p.csv.definitions("customresourcedefinitions")
	if err != nil {
		return nil, err
	}
	for i, d := range crds.Required {
		plural, group, ok := strings.Cut(d.Name, ".")
		if !ok {
			return nil, fmt.Errorf("%s: spec.customresourcedefinitions.required[%d].name %q is not plural.group", p.csv.file, i, d.Name)
		}
		required[apiKey{group, d.Version, d.Kind, plural}] = struct{}{}
	}
	services, err := p.csv.definitions("apiservicedefinitions")
	if err != nil {
		return nil, err
	}
	for _, d := range services.Required {
		required[apiKey{d.Group, d.Version, d.Kind, d.Name}] = struct{}{}
	}
	return required, nil
}

// checkOwnedCRDs fails when the CSV owns a CRD that no manifest (nor owned API service) provides.
func (p *parsed) checkOwnedCRDs() error {
	provided, err := p.providedAPIs()
	if err != nil {
		return err
	}
	crds, err := p.csv.definitions("customresourcedefinitions")
	if err != nil {
		return err
	}
	for i, d := range crds.Owned {
		plural, group, ok := strings.Cut(d.Name, ".")
		if !ok {
			return fmt.Errorf("%s: spec.customresourcedefinitions.owned[%d].name %q is not plural.group", p.csv.file, i, d.Name)
		}
		k := apiKey{group, d.Version, d.Kind, plural}
		if _, ok := provided[k]; !ok {
			return fmt.Errorf("%s: spec.customresourcedefinitions.owned[%d] is %s, but no CustomResourceDefinition in manifests/ serves it", p.csv.file, i, k)
		}
	}
	return nil
}
