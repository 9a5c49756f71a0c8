package catalog

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// loadBothWays loads data (one file named name) with bundles read in one pass and in the two passes every
// blob took before (metaKeys, then decodeBlob), and fails the test when the catalogs or the diagnostics differ.
func loadBothWays(t *testing.T, name string, data []byte, lean bool) {
	t.Helper()
	load := func(onePass bool) *Result {
		old := onePassBundles
		onePassBundles = onePass
		defer func() { onePassBundles = old }()
		return loadOne(t, name, data, lean)
	}
	one, two := load(true), load(false)
	if got, want := diagStrings(one.Diagnostics), diagStrings(two.Diagnostics); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s %q (lean %v): one pass reports\n%q\ntwo passes report\n%q", name, data, lean, got, want)
	}
	if !reflect.DeepEqual(one.Catalog, two.Catalog) {
		t.Fatalf("%s %q (lean %v): the catalog differs read in one pass", name, data, lean)
	}
}

// A hostile bundle must not get past a check by being read in one pass: whatever a blob holds (a schema
// spelled twice, in another case, escaped, not first, not a string; a bundle's keys duplicated; a syntax
// error after the keys that identify it; a property that does not decode), the one-pass read finds exactly
// what the two passes find, in the same order, with the same positions.
func FuzzOnePassBundles(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	good := `{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}`
	for _, s := range []string{
		good,
		good + "\n" + good,
		`{"schema":"olm.bundle","SCHEMA":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1"}`,
		`{"schema":"olm.bundle","name":"a.v1","Name":"b","package":"a","image":"r/a:1"}`,
		`{"name":"a.v1","package":"a","image":"r/a:1","schema":"olm.channel"}`,
		`{"name":"a.v1","package":"a","image":"r/a:1","schema":"olm.bundle","schema":"olm.channel"}`,
		`{"sch\u0065ma":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1"}`,
		`{"schema":"olm.bundl\u0065","name":"a.v1","package":"a","image":"r/a:1"}`,
		`{"schema":"olm.bundle","name":1,"package":"a","image":"r/a:1"}`,
		`{"schema":"olm.bundle","name":"a.v1","package":["a"],"image":"r/a:1"}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":1}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.gvk","value":{"group":"g"}},{"type":"x","value":{"a":tru}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","relatedImages":{}}`,
		// property values are only delimited in the one pass and validated afterwards
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"x","value":truex}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"x","value":1.}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"a",}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.gvk","value":"\x"}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"value":{"a":[}],"type":"x"}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"x","value":}}]}`,
		// the plain properties form is read (and a CSV's metadata checked) as it goes; anything else is not
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":{"displayName":"A","keywords":["k"]}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":{"displayName":1}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":null}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"value":{"displayName":1},"type":"olm.csv.metadata"}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"Type":"olm.csv.metadata","value":{"displayName":1}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadat\u0061","value":{"displayName":1}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":{},"type":"x"}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"x","value":{},"type":"olm.csv.metadata"}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[],"properties":[{"type":"olm.csv.metadata","value":{}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":{}}],"properties":[]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[null,{"type":"olm.package","value":{}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":{}}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"x","value":x"},{"type":"y","value":"}"}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":{"description":"a` + "\n\x01" + `"}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.csv.metadata","value":{"installModes":[{"supported":"yes"}]}}]}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","extra":{"deep":[[[[{}]]]]}}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1"`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1"}{"schema":"olm.package","name":"a"}`,
		`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1"}` + "\nschema: olm.package\nname: a\n",
		"schema: olm.bundle\nname: a.v1\npackage: a\nimage: r/a:1\nproperties:\n- type: olm.package\n  value:\n    packageName: a\n    version: 1.0.0\n",
		"image: r/a:1\nname: a.v1\nName: b\npackage: a\nschema: olm.bundle\n",
		"image: r/a:1\nname: a.v1\npackage: a\nschema: olm.bundle\n---\nschema: olm.bundle\nname: [a]\n",
	} {
		f.Add([]byte(s))
	}
	// encoding/json refuses nesting past 10,000; a typed check skips what its type does not name from depth 0
	for _, depth := range []int{9999, 10000, 10001} {
		nest := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		for _, value := range []string{nest, `{"unknown":` + nest + `}`} {
			for _, typ := range []string{"x", "olm.csv.metadata"} {
				f.Add([]byte(`{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"` + typ + `","value":` + value + `}]}`))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"catalog.json", "catalog.yaml"} {
			for _, lean := range []bool{false, true} {
				loadBothWays(t, name, data, lean)
			}
		}
	})
}

// The shared catalogs load the same read in one pass as in two (composed-279 is JSON, the others YAML).
func TestOnePassBundlesOnRealCatalogs(t *testing.T) {
	names := []string{"composed-279", "community-operators-prod-v4.16", "community-operators-prod-v4.20"}
	loadRealBothWays(t, names, "read in one pass", func(dir string, onePass bool) (*Result, error) {
		old := onePassBundles
		onePassBundles = onePass
		defer func() { onePassBundles = old }()
		return LoadDir(context.Background(), dir, LoadOptions{Lean: true})
	})
}
