package bundle

import (
	"encoding/json"
	"fmt"
	"strings"

	kjson "sigs.k8s.io/json"

	"github.com/catalogbot/catalogbot/render/bundle/internal/kubetypes"
)

const (
	kindCSV = "ClusterServiceVersion"
	kindCRD = "CustomResourceDefinition"

	groupAPIExtensions = "apiextensions.k8s.io"
)

// apiKey identifies an API a bundle provides or requires.
type apiKey struct {
	Group, Version, Kind, Plural string
}

func (k apiKey) String() string {
	return fmt.Sprintf("%s/%s, Kind=%s (plural %q)", k.Group, k.Version, k.Kind, k.Plural)
}

// crdAPIs decodes one CRD object (by its apiVersion's version, as opm does; other versions provide
// nothing) and returns the APIs it serves. opm decodes it with apimachinery's JSON deserializer into the
// apiextensions type of that version; so does this, into the copies of those types (case-sensitive
// field names, no defaulting).
//
// That deserializer reads apiVersion and kind again, with encoding/json's case folding, so a second key
// spelled "apiversion" or "KIND" can name another type. opm then decodes the object into that type (when
// the apiextensions scheme has it) and takes no API from it; here that is an error.
func crdAPIs(m manifest) ([]apiKey, error) {
	_, version, _ := m.obj.gvk()
	if version != "v1" && version != "v1beta1" {
		return nil, nil
	}
	data := m.json
	if err := deserializerKind(data, version); err != nil {
		return nil, fmt.Errorf("%s: decoding %s CustomResourceDefinition: %w", m.file, version, err)
	}
	var keys []apiKey
	if version == "v1" {
		var crd kubetypes.CRDv1
		if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &crd); err != nil {
			return nil, fmt.Errorf("%s: decoding v1 CustomResourceDefinition: %w", m.file, err)
		}
		for _, v := range crd.Spec.Versions {
			keys = append(keys, apiKey{crd.Spec.Group, v.Name, crd.Spec.Names.Kind, crd.Spec.Names.Plural})
		}
		return keys, nil
	}
	var crd kubetypes.CRDv1beta1
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &crd); err != nil {
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

// deserializerKind checks the apiVersion and kind that apimachinery's JSON deserializer reads from data
// (encoding/json into two string fields; empty parts defaulted from the CustomResourceDefinition type of
// version) name that type.
func deserializerKind(data []byte, version string) error {
	var found struct {
		APIVersion string `json:"apiVersion,omitempty"`
		Kind       string `json:"kind,omitempty"`
	}
	if err := json.Unmarshal(data, &found); err != nil {
		return fmt.Errorf("couldn't get version/kind; json parse error: %w", err)
	}
	group, ver, err := parseGroupVersion(found.APIVersion)
	if err != nil {
		return err
	}
	kind := found.Kind
	if kind == "" {
		kind = kindCRD
	}
	if group == "" && ver == "" {
		group, ver = groupAPIExtensions, version
	}
	if ver == "" && group == groupAPIExtensions {
		ver = version
	}
	if group != groupAPIExtensions || ver != version || kind != kindCRD {
		return fmt.Errorf("no kind %q is registered for version %q: the object must be a %s of %s/%s", kind, group+"/"+ver, kindCRD, groupAPIExtensions, version)
	}
	return nil
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
