package template

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/text/cases"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// meta is one template entry read as opm reads an FBC blob: through a map (so keys end up sorted and
// numbers float64), schema, package and name found case-insensitively.
type meta struct {
	Schema, Package, Name string
	Blob                  json.RawMessage
}

func (m *meta) UnmarshalJSON(blob []byte) error {
	blobMap := map[string]any{}
	if err := json.Unmarshal(blob, &blobMap); err != nil {
		return err
	}
	folder := cases.Fold()
	keySets := map[string][]string{}
	for key := range blobMap {
		f := folder.String(key)
		keySets[f] = append(keySets[f], key)
	}
	var dups []string
	for f, keys := range keySets {
		if len(keys) != 1 {
			sort.Strings(keys)
			dups = append(dups, fmt.Sprintf("duplicate keys for key %q: %v", f, keys))
		}
	}
	if len(dups) > 0 {
		return aggregate(dups)
	}
	for _, k := range []struct {
		name string
		dst  *string
	}{{"schema", &m.Schema}, {"package", &m.Package}, {"name", &m.Name}} {
		keys := keySets[folder.String(k.name)]
		if len(keys) == 0 {
			continue
		}
		v, ok := blobMap[keys[0]].(string)
		if !ok {
			return fmt.Errorf("expected value for key %q to be a string, got %t: %v", keys[0], blobMap[keys[0]], blobMap[keys[0]])
		}
		*k.dst = v
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(blobMap); err != nil {
		return err
	}
	m.Blob = buf.Bytes()
	return nil
}

// aggregate formats messages as Kubernetes' error aggregate does.
func aggregate(msgs []string) error {
	if len(msgs) == 1 {
		return fmt.Errorf("%s", msgs[0])
	}
	return fmt.Errorf("[%s]", strings.Join(msgs, ", "))
}

// BasicTemplateData is an olm.template.basic template (the type name shows in decoding errors, as opm's).
type BasicTemplateData struct {
	Schema  string  `json:"schema"`
	Entries []*meta `json:"entries"`
}

// goTypeNames puts opm's type names into encoding/json messages about our types.
var goTypeNames = strings.NewReplacer("template.Substitute", "substitutes.Substitute", "template.meta", "declcfg.Meta", "catalog.Property", "property.Property", "catalog.", "declcfg.")

func jsonMessage(err error) string { return goTypeNames.Replace(err.Error()) }

// basic renders an olm.template.basic template: its entries as they are, each bundle entry (schema and
// image only) replaced by the rendered bundle image.
func (t *run) basic(ctx context.Context) (*catalog.Catalog, error) {
	var raw json.RawMessage
	if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(t.data), 4096).Decode(&raw); err != nil {
		return nil, t.failRender(t.lines.top("schema"), fmt.Sprintf("decoding template schema: %v", err), nil)
	}
	var bt BasicTemplateData
	if err := json.Unmarshal(raw, &bt); err != nil {
		return nil, t.failRender(t.lines.top("entries"), "unmarshalling template: "+jsonMessage(err), nil)
	}
	if bt.Schema != SchemaBasic {
		return nil, t.failRender(t.lines.top("schema"), fmt.Sprintf("template has unknown schema (%q), should be %q", bt.Schema, SchemaBasic), nil)
	}
	out := &catalog.Catalog{}
	var bundleLines []int
	for i, m := range bt.Entries {
		line := t.lines.item(i, "entries")
		if m == nil {
			return nil, t.failRender(line, "entry is null", nil)
		}
		isBundle, err := addEntry(out, m)
		if err != nil {
			return nil, t.failRender(line, err.Error(), nil)
		}
		if isBundle {
			bundleLines = append(bundleLines, t.lines.itemField(i, "image", "entries"))
		}
	}
	for i, b := range out.Bundles {
		if b.Schema == "" || b.Image == "" || b.Package != "" || len(b.Properties) > 0 || len(b.RelatedImages) > 0 {
			return nil, t.failRender(bundleLines[i], "unexpected fields present in basic template bundle", nil)
		}
		r, err := t.bundle(ctx, b.Image)
		if err != nil {
			return nil, t.failRender(bundleLines[i], err.Error(), err)
		}
		out.Bundles[i] = r.Bundle
	}
	return out, nil
}

// addEntry adds one entry as opm's declcfg.LoadSlice does, with its messages.
func addEntry(c *catalog.Catalog, m *meta) (bundle bool, err error) {
	switch m.Schema {
	case catalog.SchemaPackage:
		var p catalog.Package
		if err := json.Unmarshal(m.Blob, &p); err != nil {
			return false, fmt.Errorf("parse package: %s", jsonMessage(err))
		}
		c.Packages = append(c.Packages, &p)
	case catalog.SchemaChannel:
		var ch catalog.Channel
		if err := json.Unmarshal(m.Blob, &ch); err != nil {
			return false, fmt.Errorf("parse channel: %s", jsonMessage(err))
		}
		c.Channels = append(c.Channels, &ch)
	case catalog.SchemaBundle:
		var b catalog.Bundle
		if err := json.Unmarshal(m.Blob, &b); err != nil {
			return false, fmt.Errorf("parse bundle: %s", jsonMessage(err))
		}
		if err := checkBundleObjects(&b); err != nil {
			return false, fmt.Errorf("read bundle objects: %v", err)
		}
		c.Bundles = append(c.Bundles, &b)
		return true, nil
	case catalog.SchemaDeprecations:
		var d catalog.Deprecation
		if err := json.Unmarshal(m.Blob, &d); err != nil {
			return false, fmt.Errorf("parse deprecation: %s", jsonMessage(err))
		}
		c.Deprecations = append(c.Deprecations, &d)
	case "":
		return false, fmt.Errorf("object '%s' is missing root schema field", string(m.Blob))
	default:
		c.Others = append(c.Others, &catalog.Meta{Schema: m.Schema, Package: m.Package, Name: m.Name, Blob: m.Blob})
	}
	return false, nil
}

// checkBundleObjects decodes a bundle's olm.bundle.object properties as opm does on load.
func checkBundleObjects(b *catalog.Bundle) error {
	for i, p := range b.Properties {
		if p.Type != catalog.PropertyBundleObject {
			continue
		}
		var obj catalog.BundleObject
		if err := json.Unmarshal(p.Value, &obj); err != nil {
			return fmt.Errorf("package %q, bundle %q: parse property at index %d as bundle object: %v", b.Package, b.Name, i, err)
		}
		if _, err := k8syaml.ToJSON(obj.Data); err != nil {
			return fmt.Errorf("package %q, bundle %q: convert bundle object property at index %d to JSON: %v", b.Package, b.Name, i, err)
		}
	}
	return nil
}
