package catalog

import (
	"context"
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// A load with CSVTypesOnly converts a YAML CSV's metadata without its strings: its check must then say
// what it says of the whole text. It does if nothing in the metadata's type reads a string's content:
// only plain strings (as values or map keys, which are kept), numbers, booleans, raw JSON, and no type
// that decodes itself (a time, a quantity, []byte's base64).
func TestCSVMetadataReadsNoStringContent(t *testing.T) {
	unmarshaler := reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler := reflect.TypeFor[encoding.TextUnmarshaler]()
	raw := reflect.TypeFor[json.RawMessage]()
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		if typ == raw {
			return
		}
		if reflect.PointerTo(typ).Implements(unmarshaler) || reflect.PointerTo(typ).Implements(textUnmarshaler) {
			t.Errorf("%s (%s) decodes itself: it may read a string's content", path, typ)
		}
		switch typ.Kind() {
		case reflect.Struct:
			for i := range typ.NumField() {
				walk(typ.Field(i).Type, path+"."+typ.Field(i).Name)
			}
		case reflect.Slice:
			if typ.Elem().Kind() == reflect.Uint8 {
				t.Errorf("%s (%s) decodes base64 from a string", path, typ)
			}
			walk(typ.Elem(), path+"[]")
		case reflect.Map:
			walk(typ.Key(), path+"{key}")
			walk(typ.Elem(), path+"{}")
		case reflect.Pointer:
			walk(typ.Elem(), path)
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		default:
			t.Errorf("%s (%s): a %s may read a string's content", path, typ, typ.Kind())
		}
	}
	walk(reflect.TypeFor[CSVMetadata](), "CSVMetadata")
}

// loadTypesOnly loads data as the only file of a lean catalog, with and without CSVTypesOnly, and fails
// the test when the catalogs or the diagnostics differ.
func loadTypesOnly(t *testing.T, name string, data []byte) {
	t.Helper()
	load := func(typesOnly bool) *Result {
		res, err := LoadFS(context.Background(), fstest.MapFS{name: {Data: data}},
			LoadOptions{Lean: true, CSVTypesOnly: typesOnly, Concurrency: 1, MaxFileSize: 1 << 20})
		if err != nil {
			t.Fatalf("load %s: %v", name, err)
		}
		return res
	}
	with, without := load(true), load(false)
	if got, want := diagStrings(with.Diagnostics), diagStrings(without.Diagnostics); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %q: with CSVTypesOnly, reports\n%q\nwithout\n%q", name, data, got, want)
	}
	if !reflect.DeepEqual(with.Catalog, without.Catalog) {
		t.Fatalf("%s %q: the catalog differs with CSVTypesOnly", name, data)
	}
}

// A hostile bundle must not get a CSV's metadata past its check, nor another property's value read
// without its strings, by the way it spells its properties: whatever a YAML catalog holds (a metadata of
// the wrong types, a property whose "type" comes twice, in another case, after its value, a tagged value
// outside a bundle's properties, a bundle the one-pass read does not take), the load with CSVTypesOnly
// finds exactly what the load without it finds, and keeps the same catalog.
func FuzzCSVTypesOnly(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	bundle := "schema: olm.bundle\nname: a.v1\npackage: a\nimage: r/a:1\nproperties:\n"
	csv := "- type: olm.csv.metadata\n  value:\n"
	pkg := "- type: olm.package\n  value:\n    packageName: " + strings.Repeat("a", 40) + "\n    version: 1.0.0\n"
	for _, s := range []string{
		bundle + pkg + csv + "    description: |\n      text\n    displayName: A\n    keywords:\n    - k\n" +
			"    annotations:\n      alm-examples: |-\n        [{\"a\": 1}]\n    installModes:\n    - supported: true\n      type: OwnNamespace\n",
		bundle + csv + "    displayName:\n      a: b\n",
		bundle + csv + "    description: 1\n",
		bundle + csv + "    keywords: a long keyword\n",
		bundle + csv + "    annotations:\n      a: 1\n",
		bundle + csv + "    annotations:\n      a:\n      - x\n",
		bundle + csv + "    installModes:\n    - supported: 'yes'\n      type: x\n",
		bundle + csv + "    installModes: |\n      text\n",
		bundle + csv + "    crdDescriptions:\n      owned:\n      - name: a\n        specDescriptors:\n        - path: p\n          value: |\n            x\n",
		bundle + csv + "    provider: a string\n",
		bundle + csv + "    minKubeVersion: 1.2.3\n    maturity: 5\n",
		bundle + "- type: olm.csv.metadata\n  value: a string\n",
		bundle + "- type: olm.csv.metadata\n  value: ~\n",
		// the property's type said twice, in another case, after the value
		bundle + "- type: olm.csv.metadata\n  type: olm.package\n  value:\n    packageName: " + strings.Repeat("b", 40) + "\n",
		bundle + "- type: olm.package\n  type: olm.csv.metadata\n  value:\n    packageName: " + strings.Repeat("b", 40) + "\n",
		bundle + "- type: olm.csv.metadata\n  value:\n    packageName: " + strings.Repeat("b", 40) + "\n  type: olm.package\n",
		bundle + "- type: olm.csv.metadata\n  value:\n    packageName: " + strings.Repeat("b", 40) + "\n  Type: olm.package\n",
		bundle + "- Type: olm.package\n  type: olm.csv.metadata\n  value:\n    packageName: b\n",
		bundle + "- value:\n    packageName: b\n  type: olm.csv.metadata\n",
		bundle + "- type: olm.csv.metadata\n  value:\n    displayName: A\n  value:\n    displayName: 1\n",
		// tagged values outside a bundle's properties
		"schema: olm.package\nname: a\nproperties:\n" + csv + "    displayName: A\n",
		"schema: olm.channel\nname: c\npackage: a\nentries:\n- name: a.v1\nproperties:\n" + csv + "    displayName: A\n",
		"type: olm.csv.metadata\nvalue:\n  schema: olm.bundle\n",
		"image: r/a:1\nname: a.v1\npackage: a\nproperties:\n" + csv + "    displayName: A\nschema: olm.bundle\nschema: olm.package\n",
		"image: r/a:1\nname: a.v1\nName: b\npackage: a\nproperties:\n" + csv + "    displayName: A\nschema: olm.bundle\n",
		bundle + csv + "    displayName: A\nrelatedImages:\n- type: olm.csv.metadata\n  value: r/b:1\n",
		bundle + csv + "    displayName: A\n---\n" + bundle + csv + "    displayName: [1]\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		loadTypesOnly(t, "catalog.yaml", data)
	})
}

// The shared YAML catalogs load the same with CSVTypesOnly as without.
func TestCSVTypesOnlyOnRealCatalogs(t *testing.T) {
	names := []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20"}
	loadRealBothWays(t, names, "with CSVTypesOnly", func(dir string, typesOnly bool) (*Result, error) {
		return LoadDir(context.Background(), dir, LoadOptions{Lean: true, CSVTypesOnly: typesOnly})
	})
}
