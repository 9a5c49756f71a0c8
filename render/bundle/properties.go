package bundle

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/catalogbot/catalogbot/catalog"
)

// sourcedProperty is a property as read from a bundle file, with where it came from for error messages.
type sourcedProperty struct {
	Type  string
	Value json.RawMessage
	src   string
}

// Property values opm builds itself (field order and names are the wire format).
type packageValue struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Release     string `json:"release,omitzero"`
}

type packageRequiredValue struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

type gvkValue struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type bundleObjectValue struct {
	Data []byte `json:"data"`
}

// csvPropertiesAnnotation is the CSV annotation whose JSON list of properties opm adds to the bundle's.
const csvPropertiesAnnotation = "olm.properties"

// build encodes a property value as opm does: compact JSON without HTML escaping.
func build(typ string, v any) (catalog.Property, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return catalog.Property{}, fmt.Errorf("encoding %s property: %w", typ, err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, buf.Bytes()); err != nil {
		return catalog.Property{}, fmt.Errorf("encoding %s property: %w", typ, err)
	}
	return catalog.Property{Type: typ, Value: out.Bytes()}, nil
}

// declaredProperties are the properties opm's bundle parser collects before rendering: those of the
// properties file, then olm.package from the annotations, the CSV's olm.properties annotation and one
// olm.gvk per provided API, without duplicates.
func (p *parsed) declaredProperties(version, release string, provided map[apiKey]struct{}) ([]sourcedProperty, error) {
	all := slices.Clone(p.md.properties)
	pkg, err := json.Marshal(packageValue{PackageName: p.md.packageName, Version: version, Release: release})
	if err != nil {
		return nil, fmt.Errorf("encoding olm.package: %w", err)
	}
	all = append(all, sourcedProperty{Type: catalog.PropertyPackage, Value: pkg, src: p.md.annotationsFile})
	if s, ok := p.csv.Annotations[csvPropertiesAnnotation]; ok {
		// opm ignores a malformed annotation but keeps whatever part of it decoded.
		var fromCSV []filedProperty
		_ = json.Unmarshal([]byte(s), &fromCSV)
		all = append(all, sourced(p.csv.file, "metadata.annotations[olm.properties]", fromCSV)...)
	}
	for k := range provided {
		v, err := json.Marshal(gvkValue{Group: k.Group, Kind: k.Kind, Version: k.Version})
		if err != nil {
			return nil, fmt.Errorf("encoding olm.gvk: %w", err)
		}
		all = append(all, sourcedProperty{Type: catalog.PropertyGVK, Value: v, src: p.csv.file})
	}
	seen := map[string]bool{}
	return slices.DeleteFunc(all, func(sp sourcedProperty) bool {
		k := fmt.Sprintf("type: %s, value: %s", sp.Type, sp.Value)
		dup := seen[k]
		seen[k] = true
		return dup
	}), nil
}

// properties computes the bundle blob's properties in opm's order: sorted by type then value, with the
// olm.bundle.object (and any olm.csv.metadata) properties last.
func (p *parsed) properties() ([]catalog.Property, error) {
	version, err := p.csv.version()
	if err != nil {
		return nil, err
	}
	release, err := p.csv.release()
	if err != nil {
		return nil, err
	}
	provided, err := p.providedAPIs()
	if err != nil {
		return nil, err
	}
	required, err := p.requiredAPIs()
	if err != nil {
		return nil, err
	}
	declared, err := p.declaredProperties(version, release, provided)
	if err != nil {
		return nil, err
	}

	providedGVKs := map[gvkValue]bool{}
	requiredGVKs := map[gvkValue]bool{}
	var (
		pkg    catalog.Property
		others []catalog.Property
		pkgReq []catalog.Property
	)
	for _, sp := range declared {
		switch sp.Type {
		case catalog.PropertyGVK:
			var v gvkValue
			if err := json.Unmarshal(sp.Value, &v); err != nil {
				return nil, fmt.Errorf("%s: olm.gvk value: %w", sp.src, err)
			}
			providedGVKs[v] = true
		case catalog.PropertyPackage:
			var v packageValue
			if err := json.Unmarshal(sp.Value, &v); err != nil {
				return nil, fmt.Errorf("%s: olm.package value: %w", sp.src, err)
			}
			if pkg, err = build(catalog.PropertyPackage, v); err != nil {
				return nil, err
			}
		default:
			others = append(others, catalog.Property{Type: sp.Type, Value: sp.Value})
		}
	}
	for _, sp := range p.md.dependencies {
		switch sp.Type {
		case catalog.PropertyGVK:
			var v gvkValue
			if err := json.Unmarshal(sp.Value, &v); err != nil {
				return nil, fmt.Errorf("%s: olm.gvk value: %w", sp.src, err)
			}
			requiredGVKs[v] = true
		case catalog.PropertyPackage:
			var v packageValue
			if err := json.Unmarshal(sp.Value, &v); err != nil {
				return nil, fmt.Errorf("%s: olm.package value: %w", sp.src, err)
			}
			req, err := build(catalog.PropertyPackageRequired, packageRequiredValue{PackageName: v.PackageName, VersionRange: v.Version})
			if err != nil {
				return nil, err
			}
			pkgReq = append(pkgReq, req)
		default:
			others = append(others, catalog.Property{Type: sp.Type, Value: sp.Value})
		}
	}
	for k := range provided {
		providedGVKs[gvkValue{Group: k.Group, Kind: k.Kind, Version: k.Version}] = true
	}
	for k := range required {
		requiredGVKs[gvkValue{Group: k.Group, Kind: k.Kind, Version: k.Version}] = true
	}

	var props []catalog.Property
	for _, m := range p.objects {
		obj, err := build(catalog.PropertyBundleObject, bundleObjectValue{Data: m.json})
		if err != nil {
			return nil, err
		}
		props = append(props, obj)
	}
	props = append(props, pkg)
	for v := range providedGVKs {
		gvk, err := build(catalog.PropertyGVK, v)
		if err != nil {
			return nil, err
		}
		props = append(props, gvk)
	}
	for v := range requiredGVKs {
		gvk, err := build(catalog.PropertyGVKRequired, v)
		if err != nil {
			return nil, err
		}
		props = append(props, gvk)
	}
	props = append(props, pkgReq...)
	props = append(props, others...)

	slices.SortStableFunc(props, func(a, b catalog.Property) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), bytes.Compare(a.Value, b.Value))
	})
	return moveObjectsLast(props), nil
}

// moveObjectsLast keeps the order but puts olm.bundle.object and olm.csv.metadata properties last.
func moveObjectsLast(props []catalog.Property) []catalog.Property {
	var first, last []catalog.Property
	for _, pr := range props {
		if pr.Type == catalog.PropertyBundleObject || pr.Type == catalog.PropertyCSVMetadata {
			last = append(last, pr)
		} else {
			first = append(first, pr)
		}
	}
	return append(first, last...)
}
