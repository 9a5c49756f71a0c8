package catalog

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// long is a base64 scalar long enough to be replaced by a stand-in.
var long = strings.Repeat("eyJhcGlWZXJzaW9uIjoiYXBpZXh0ZW5zaW9ucy5rOHMuaW8vdjEiLCJraW5kIjoiQ3VzdG9tUmVz", 20)

// checkStandIn fails unless yamlToJSON gives exactly what sigs.k8s.io/yaml gives (output or error).
func checkStandIn(t *testing.T, doc []byte) {
	t.Helper()
	want, werr := yaml.YAMLToJSON(doc)
	got, _, gerr := yamlToJSON(nil, doc, textUnread, "")
	if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
		t.Fatalf("error %v, want %v\ndocument:\n%.300s", gerr, werr, doc)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("converted to\n%.400s\nwant\n%.400s\ndocument:\n%.300s", got, want, doc)
	}
}

// Each case puts long scalars (@@, or a variant) where a stand-in could change the conversion if the rules
// of yamlblob.go were wrong: continuation lines, block and quoted scalars, number-like and padded text,
// a document already holding the stand-in prefix, tabs, CRLF, anchors.
var standInCases = []string{
	"schema: olm.bundle\nproperties:\n- type: olm.bundle.object\n  value:\n    data: @@\n- type: olm.bundle.object\n  value:\n    data: @@==\n",
	"data: @@\n  continued on the next line\nother: 1\n",
	"data: @@\n\n    continued after a blank line\n",
	"data: @@\n# a comment\n",
	"data: @@\n    # an indented comment\n",
	"a: |\n  data: @@\n  more text\n",
	"a: |\n  data: @@\nb: 2\n",
	"a: >\n  data: @@\nb: 2\n",
	"a: \"first\n  data: @@\n  last\"\n",
	"a: 'first\n  data: @@\n  last'\n",
	"a: {x: 1,\n data: @@\n }\n",
	"- data: @@\n  next: 1\n- data: @@\n",
	"data: &anchor @@\nother: *anchor\n",
	"base: &b\n  data: @@\ncopy: *b\n",
	"data: @@\r\nother: 1\r\n",
	"data: @@\n\tother: 1\n",
	"data: @@ \nother: 1\n",
	"data: @@#comment\n",
	"data: Zcatalogbotq7x0Z@@\n",
	"data: @@=x\n",
	"? data: @@\n: value\n",
	"data: @@: 1\n",
	"data: @@\n  - item\n",
	"data: @@\ndata: @@\n",
	"data: " + strings.Repeat("1234567890", 120) + "\n",
	"data: 0x" + strings.Repeat("abcdef", 200) + "\n",
	"data: " + strings.Repeat("1e5", 400) + "\n",
	"data: " + strings.Repeat("yes", 400) + "\n",
}

func TestYAMLStandInsConvertAsWritten(t *testing.T) {
	for _, c := range standInCases {
		checkStandIn(t, []byte(strings.ReplaceAll(c, "@@", long)))
	}
}

// The stand-in must have replaced something in the ordinary case, or the test above tests nothing.
func TestYAMLStandInReplacesBundleObjects(t *testing.T) {
	doc := []byte(strings.ReplaceAll(standInCases[0], "@@", long))
	var s int
	for from := 0; from < len(doc); {
		end := bytes.IndexByte(doc[from:], '\n') + from
		if _, _, ok := longScalar(doc, from, end); ok {
			s++
		}
		from = end + 1
	}
	if s != 2 {
		t.Fatalf("%d scalars replaced, want 2", s)
	}
}

// Every YAML document of the real catalogs converts exactly as sigs.k8s.io/yaml converts it.
func TestYAMLStandInsOnRealCatalogs(t *testing.T) {
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20"} {
		files, _ := filepath.Glob(filepath.Join(sharedData(t, "catalogs", name), "*", "*.yaml"))
		if len(files) == 0 {
			t.Fatalf("no YAML files in %s", name)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs := newYAMLDocs(data, 0)
			for d, ok, _ := docs.next(); ok; d, ok, _ = docs.next() {
				checkStandIn(t, data[d.start:d.end])
			}
		}
	}
}

func FuzzYAMLStandIn(f *testing.F) {
	for _, c := range standInCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		checkStandIn(t, []byte(strings.ReplaceAll(doc, "@@", long)))
	})
}
