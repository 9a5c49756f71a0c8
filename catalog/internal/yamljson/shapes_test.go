package yamljson

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// What the real catalogs the shared data lacks hold (community-operators-prod v4.18, v4.21 and v4.22 at
// 699495f2f, every document of which this package converts): a few huge documents among many small ones
// (v4.22's stackgres-community package is two olm.bundle documents of 1.2 MB, a fifth of the catalog's
// bytes, against 190 kB for the largest of the shared v4.20), their olm.csv.metadata carrying thousands of
// CRD descriptors with literal block scalars ("description: |", 1,963 of them in v4.22 against 329 in
// v4.20), alm-examples as a "|-" block of indented JSON, and indentation indicators ("|2").

// csvMetadataBundle is an olm.bundle document shaped like those: n owned CRDs, each with descriptors
// whose descriptions are literal block scalars (clipped, stripped, kept, with an indentation indicator),
// x-descriptors lists, and alm-examples as JSON in a "|-" block.
func csvMetadataBundle(n int) string {
	var b strings.Builder
	b.WriteString("---\nimage: quay.io/example/op@sha256:72bae52af040b088349d03af930c7fe379df2bbc434c68a3666aa33bee839467\n" +
		"name: op.v1.18.7\npackage: op\nproperties:\n- type: olm.package\n  value:\n    packageName: op\n    version: 1.18.7\n" +
		"- type: olm.csv.metadata\n  value:\n    annotations:\n      alm-examples: |-\n        [\n")
	for i := range n {
		fmt.Fprintf(&b, "          {\n            \"apiVersion\": \"example.io/v1\",\n            \"kind\": \"SG%d\",\n"+
			"            \"spec\": {\n              \"instances\": %d,\n              \"size\": \"20Gi\"\n            }\n          },\n", i, i)
	}
	b.WriteString("          {}\n        ]\n      capabilities: Deep Insights\n      createdAt: \"2026-05-20T13:41:01Z\"\n" +
		"      description: |\n        Line one of the operator.\n\n        * a list item <b>&</b>\n    apiServiceDefinitions: {}\n" +
		"    crdDescriptions:\n      owned:\n")
	chomps := []string{"|", "|-", "|+", "|2", ">-"}
	for i := range n {
		fmt.Fprintf(&b, "      - description: The SG%d custom resource.\n        displayName: SG %d\n        kind: SG%d\n"+
			"        name: sg%d.example.io\n        specDescriptors:\n", i, i, i, i)
		for j := range 4 {
			fmt.Fprintf(&b, "        - description: %s\n            The field %d.%d, \"quoted\", with a tab-less and a\n"+
				"              deeper line.\n\n", chomps[(i+j)%len(chomps)], i, j)
			fmt.Fprintf(&b, "          displayName: Field %d\n          path: spec.field%d\n          x-descriptors:\n"+
				"          - urn:alm:descriptor:com.tectonic.ui:text\n          - 'urn:alm:descriptor:io.kubernetes:Secret'\n", j, j)
		}
		b.WriteString("        version: v1\n")
	}
	b.WriteString("    displayName: Op\n    keywords:\n    - postgres\n    - '2.0'\n    provider:\n      name: Example\n" +
		"schema: olm.bundle\n")
	return b.String()
}

// realShapes are fuzz seeds and test documents of those shapes, small enough to mutate.
var realShapes = []string{
	csvMetadataBundle(1),
	csvMetadataBundle(3),
	"description: |2\n   leading space kept\n  x\nb: >+\n  folded\n\n\nc: |-\n  [\n    {\"a\": \"b\"}\n  ]\n",
	"owned:\n- description: |\n    text\n  x-descriptors:\n  - 'urn:alm:descriptor:com.tectonic.ui:booleanSwitch'\n",
}

func TestRealShapesConvertExactly(t *testing.T) {
	for _, doc := range append(realShapes, csvMetadataBundle(200)) {
		if !same(t, []byte(doc)) {
			t.Errorf("declined a document of a real catalog's shape:\n%.400s", doc)
		}
	}
}

// A large document's JSON takes one buffer of about the document's size (jsonSizeHint), not append's
// chain of ever larger ones (4.1 MB for this document's 0.74 MB of JSON; on v4.22 such chains were 10.5 of
// a validation's 15.7 MB of allocations and raised its peak private memory).
func TestLargeDocumentTakesOneBuffer(t *testing.T) {
	doc := []byte(csvMetadataBundle(600)) // about 1 MB, as v4.22's largest
	var js []byte
	allocated := uint64(1 << 62)
	for range 3 { // the least of three: the first takes the parser's scratch buffers from the pool's cold end
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, _, ok := AppendConvert(nil, doc, Options{})
		runtime.ReadMemStats(&after)
		if !ok {
			t.Fatal("declined")
		}
		js, allocated = out, min(allocated, after.TotalAlloc-before.TotalAlloc)
	}
	if limit := uint64(jsonSizeHint(len(doc))) * 9 / 8; allocated > limit {
		t.Errorf("converting a %d-byte document (JSON %d bytes) allocated %d bytes, more than %d", len(doc), len(js), allocated, limit)
	}
	if len(js) > jsonSizeHint(len(doc)) {
		t.Errorf("the JSON (%d bytes) outgrew the hint for its %d-byte document (%d)", len(js), len(doc), jsonSizeHint(len(doc)))
	}
}
