package catalog

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unsafe"
)

// A pull request can add as many files as it likes: a catalog whose files together pass the total limit
// is refused before anything is parsed, with a diagnostic on the file where the limit is passed.
func TestLoadRefusesCatalogOverTotalLimit(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 10 {
		fsys[fmt.Sprintf("p%d/catalog.json", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(`{"schema":"olm.package","name":"p%d"}`, i) + strings.Repeat(" ", 100))}
	}
	res, err := LoadFS(context.Background(), fsys, LoadOptions{MaxTotalSize: 500})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Refused || len(res.Catalog.Packages) != 0 {
		t.Fatalf("want the catalog refused unread, got refused=%v with %d packages", res.Refused, len(res.Catalog.Packages))
	}
	if len(res.Diagnostics) != 1 {
		t.Fatalf("want one diagnostic, got %v", res.Diagnostics)
	}
	d := res.Diagnostics[0]
	// each file is 133 bytes: the fourth one passes 500
	if d.Rule != RuleCatalogTooLarge || d.File != "p3/catalog.json" || !strings.Contains(d.Message, "limit of 500 bytes") {
		t.Fatalf("want %s on p3/catalog.json naming the limit, got %s", RuleCatalogTooLarge, d)
	}
	res, err = LoadFS(context.Background(), fsys, LoadOptions{MaxTotalSize: 5000})
	if err != nil || res.Refused || len(res.Catalog.Packages) != 10 {
		t.Fatalf("under the limit the catalog loads: err %v, refused %v, %d packages", err, res.Refused, len(res.Catalog.Packages))
	}
}

// Sized is told the size of the files the load reads, once, before it reads them: not the .indexignore
// files nor what they exclude, and nothing for a catalog over the total limit.
func TestLoadTellsItsSize(t *testing.T) {
	fsys := fstest.MapFS{
		"a/catalog.json":   {Data: []byte(`{"schema":"olm.package","name":"a"}`)},
		"b/catalog.json":   {Data: []byte(`{"schema":"olm.package","name":"b"}` + strings.Repeat(" ", 64))},
		"b/README.md":      {Data: []byte(strings.Repeat("x", 1000))},
		".indexignore":     {Data: []byte("README.md\n")},
		"c/notes.txt.keep": {Data: []byte(`{"schema":"olm.package","name":"c"}`)},
	}
	var told []int64
	sized := func(n int64) { told = append(told, n) }
	if _, err := LoadFS(context.Background(), fsys, LoadOptions{Sized: sized}); err != nil {
		t.Fatal(err)
	}
	if want := int64(35 + 99 + 35); !slices.Equal(told, []int64{want}) {
		t.Errorf("Sized told %v, want once %d", told, want)
	}
	told = nil
	if res, err := LoadFS(context.Background(), fsys, LoadOptions{Sized: sized, MaxTotalSize: 100}); err != nil || !res.Refused || told != nil {
		t.Errorf("over the total: refused %v, Sized told %v (err %v), want refused and nothing told", res.Refused, told, err)
	}
}

// The workers take the largest files first; the catalog still comes out in file order: the first
// package's file is the smallest, the last the largest, and one worker reads them in the opposite order.
func TestLoadKeepsFileOrderWhateverTheSizes(t *testing.T) {
	fsys := fstest.MapFS{}
	for i := range 10 {
		fsys[fmt.Sprintf("p%d/catalog.json", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf(`{"schema":"olm.package","name":"p%d"}`, i) + strings.Repeat(" ", 100*i))}
	}
	if got, want := largestFirst([]int64{1, 5, 3, 5, 0}), []int{1, 3, 2, 0, 4}; !slices.Equal(got, want) {
		t.Fatalf("largestFirst: got %v, want %v", got, want)
	}
	res, err := LoadFS(context.Background(), fsys, LoadOptions{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.Catalog.Packages {
		names = append(names, p.Name)
	}
	if want := []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}; !slices.Equal(names, want) {
		t.Fatalf("packages in the order %v, want file order %v", names, want)
	}
}

// Interned strings are equal to what was read, and the catalog's schema fields are the constants.
func TestLoadSharesRepeatedStrings(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"schema":"olm.package","name":"etcd","defaultChannel":"alpha"}`)
	b.WriteString(`{"schema":"olm.channel","package":"etcd","name":"alpha","entries":[{"name":"etcd.v1"}]}`)
	for i := range 3 {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","package":"etcd","name":"etcd.v%d","image":"x/y@sha256:%064d","properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"%d.0.0"}}]}`, i, i, i)
	}
	res, err := LoadFS(context.Background(), fstest.MapFS{"c.json": {Data: []byte(b.String())}}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Catalog
	if len(res.Diagnostics) != 0 || len(c.Bundles) != 3 || c.Packages[0].Schema != SchemaPackage || c.Channels[0].Schema != SchemaChannel {
		t.Fatalf("unexpected load: %v %+v", res.Diagnostics, c)
	}
	for _, bd := range c.Bundles {
		if bd.Package != "etcd" || bd.Schema != SchemaBundle {
			t.Fatalf("bundle %s: package %q schema %q", bd.Name, bd.Package, bd.Schema)
		}
		if unsafe.StringData(bd.Package) != unsafe.StringData(c.Channels[0].Package) {
			t.Fatalf("bundle %s keeps its own copy of the package name", bd.Name)
		}
	}
}

// A lean catalog is kept for a whole validation: what every bundle repeats (property types, the
// packages, groups, kinds and versions of its APIs) is one string for the file, and no list keeps the
// spare capacity the decoder's appends left.
func TestLeanLoadSharesWhatBundlesRepeat(t *testing.T) {
	var b strings.Builder
	const gvks = `{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","kind":"EtcdCluster","version":"v1beta2"}},` +
		`{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","kind":"EtcdBackup","version":"v1beta2"}},` +
		`{"type":"olm.gvk","value":{"group":"etcd.database.coreos.com","kind":"EtcdRestore","version":"v1beta2"}}`
	for i := range 3 {
		fmt.Fprintf(&b, `{"schema":"olm.bundle","package":"etcd","name":"etcd.v%d","image":"x/y:%d","relatedImages":[{"name":"a","image":"x/a"},{"name":"b","image":"x/b"},{"name":"c","image":"x/c"}],"properties":[{"type":"olm.package","value":{"packageName":"etcd","version":"%d.0.0"}},%s]}`, i, i, i, gvks)
	}
	res, err := LoadFS(context.Background(), fstest.MapFS{"c.json": {Data: []byte(b.String())}}, LoadOptions{Lean: true})
	if err != nil || len(res.Diagnostics) != 0 || len(res.Catalog.Bundles) != 3 {
		t.Fatalf("unexpected load: %v %v", err, res.Diagnostics)
	}
	first := res.Catalog.Bundles[0]
	same := func(what, a, b string) {
		t.Helper()
		if a != b || unsafe.StringData(a) != unsafe.StringData(b) {
			t.Errorf("%s: %q and %q are not one string", what, a, b)
		}
	}
	for _, bd := range res.Catalog.Bundles {
		for i, p := range bd.Properties {
			same("property type", p.Type, first.Properties[i].Type)
			if p.Value != nil {
				t.Errorf("bundle %s keeps the value of property %d in a lean load", bd.Name, i)
			}
		}
		for i, g := range bd.Parsed.GVKs {
			f := first.Parsed.GVKs[i]
			same("group", g.Group, f.Group)
			same("kind", g.Kind, f.Kind)
			same("version", g.Version, f.Version)
		}
		same("package property", bd.Parsed.Packages[0].PackageName, bd.Package)
		if len(bd.Properties) != 4 || cap(bd.Properties) != 4 || len(bd.Parsed.GVKs) != 3 || cap(bd.Parsed.GVKs) != 3 ||
			cap(bd.RelatedImages) != 3 {
			t.Errorf("bundle %s: lists with spare capacity: %d/%d properties, %d/%d GVKs, %d/%d related images", bd.Name,
				len(bd.Properties), cap(bd.Properties), len(bd.Parsed.GVKs), cap(bd.Parsed.GVKs), len(bd.RelatedImages), cap(bd.RelatedImages))
		}
	}
}

// A bundle's objects are decoded one after another into one buffer, kept for the next bundle; its views
// are the manifests, in order (what the bundle visitor reads), and a broken one after a good one is still
// found.
func TestBundleObjectsDecodeIntoOneBuffer(t *testing.T) {
	obj := func(manifest string) Property {
		return Property{Type: PropertyBundleObject, Value: []byte(`{"data":"` + base64.StdEncoding.EncodeToString([]byte(manifest)) + `"}`)}
	}
	big := `{"kind":"CustomResourceDefinition","spec":"` + strings.Repeat("x", 4000) + `"}`
	manifests := []string{big, "kind: ConfigMap\n", `{"kind":"ClusterServiceVersion"}`}
	var props []Property
	for _, m := range manifests {
		props = append(props, obj(m))
	}
	props = append(props[:1], append([]Property{{Type: PropertyPackage, Value: []byte(`{"packageName":"p","version":"1.0.0"}`)}}, props[1:]...)...)
	var scratch objectScratch
	views := func() []string {
		var out []string
		for _, v := range scratch.views {
			out = append(out, string(v))
		}
		return out
	}
	p, err := parseProperties(nil, props, true, nil, true, func(s string) string { return s }, &scratch)
	if err != nil || p.Objects != 3 {
		t.Fatalf("parse: %d objects, %v", p.Objects, err)
	}
	if got := views(); !slices.Equal(got, manifests) {
		t.Fatalf("the objects handed on are %q, want %q", got, manifests)
	}
	if cap(scratch.buf) < len(big)+len(manifests[1])+len(manifests[2]) {
		t.Fatalf("the buffer kept has %d bytes, less than the bundle's objects", cap(scratch.buf))
	}
	first := unsafe.SliceData(scratch.buf)
	if _, err := parseProperties(nil, props, true, nil, true, func(s string) string { return s }, &scratch); err != nil || unsafe.SliceData(scratch.buf) != first {
		t.Errorf("a second bundle's objects did not reuse the buffer (err %v)", err)
	}
	for i, v := range scratch.views {
		if len(v) > 0 && unsafe.SliceData(v) != unsafe.SliceData(scratch.buf[len(strings.Join(manifests[:i], "")):]) {
			t.Errorf("object %d was not decoded into the buffer after the one before it", i)
		}
	}
	if got := views(); !slices.Equal(got, manifests) {
		t.Fatalf("the second bundle's objects are %q, want %q", got, manifests)
	}
	broken := append(slices.Clone(props), obj("kind: [unclosed\n"))
	if _, err := parseProperties(nil, broken, true, nil, true, func(s string) string { return s }, &scratch); err == nil {
		t.Error("a manifest that is neither JSON nor YAML, decoded into the reused buffer, was accepted")
	}
	huge := []Property{obj(`{"kind":"ConfigMap","data":"` + strings.Repeat("y", maxKeptBuffer) + `"}`)}
	if _, err := parseProperties(nil, huge, true, nil, true, func(s string) string { return s }, &scratch); err != nil {
		t.Fatal(err)
	}
	if cap(scratch.buf) > maxKeptBuffer {
		t.Errorf("a bundle of %d bytes of objects left a buffer of %d kept, over maxKeptBuffer", maxKeptBuffer+1, cap(scratch.buf))
	}
}
