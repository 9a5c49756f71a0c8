package catalog

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
)

// largeYAMLBundle is an olm.bundle document of about size bytes, most of them one property's value.
func largeYAMLBundle(name string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "---\nimage: quay.io/example/big:%s\nname: %s\npackage: big\nproperties:\n"+
		"- type: olm.package\n  value:\n    packageName: big\n    version: 0.0.1\n- type: example.large\n  value:\n", name, name)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "    key%07d: a value of some words\n", i)
	}
	b.WriteString("schema: olm.bundle\n")
	return b.String()
}

// A file's documents larger than maxKeptBuffer share one JSON buffer (community-operators-prod v4.22's
// largest package is two olm.bundle documents of 1.2 MB): loading a file of two such documents allocates
// about what loading one does, plus the second's bytes: its JSON goes into the first's memory.
func TestLargeYAMLDocumentsShareTheirJSONBuffer(t *testing.T) {
	const size = 3 * maxKeptBuffer / 2
	one := largeYAMLBundle("big.v0.0.1", size)
	two := one + largeYAMLBundle("big.v0.0.2", size)
	allocated := func(file string) uint64 {
		t.Helper()
		fsys := fstest.MapFS{"big/catalog.yaml": {Data: []byte(file)}}
		least := uint64(1 << 62)
		for range 3 { // the least of three: a collection may start in the middle of one
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := LoadFS(context.Background(), fsys, LoadOptions{Lean: true, Concurrency: 1})
			runtime.ReadMemStats(&after)
			if err != nil || len(res.Catalog.Bundles) == 0 {
				t.Fatalf("load: %v, %d bundles", err, len(res.Catalog.Bundles))
			}
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	a1, a2 := allocated(one), allocated(two)
	// the second document's own cost: the file's bytes (read, not mapped, from an fstest.MapFS) and its
	// few decoded values; not a second JSON buffer of about size bytes
	if extra := int64(a2) - int64(a1) - int64(len(two)-len(one)); extra > size/4 {
		t.Errorf("one document of %d bytes: %d bytes allocated; two: %d bytes, %d more than the second's file bytes (a JSON buffer each?)",
			len(one), a1, a2, extra)
	}
}
