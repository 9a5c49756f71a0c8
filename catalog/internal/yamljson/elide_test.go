package yamljson

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
)

// elideTypes are the types same() elides in every document it checks: a catalog's, and one the generator
// writes often.
var elideTypes = []string{"olm.csv.metadata", "x"}

// elidedDocs counts the documents sameElided saw converted with a value elided.
var elidedDocs atomic.Int64

// sameElided checks a conversion of doc with opts.ElideType typ against full, the JSON sigs.k8s.io/yaml
// returns for it: declined, or the same JSON but for strings written as "", each inside the value of an
// object whose keys are exactly "type" (with the string typ) and "value"; elided says so exactly when a
// string was. It reports whether doc was converted with elision.
func sameElided(t testing.TB, doc, full []byte, typ string) bool {
	t.Helper()
	got, elided, ok := AppendConvertScanned(nil, doc, Options{ElideType: typ})
	if !ok {
		return false
	}
	if !elided {
		if !bytes.Equal(got, full) {
			t.Fatalf("document %q, eliding %q: nothing elided, yet\n got %s\nwant %s", doc, typ, got, full)
		}
		return true
	}
	elidedDocs.Add(1)
	var f, e any
	if err := json.Unmarshal(full, &f); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &e); err != nil {
		t.Fatalf("document %q, eliding %q: not JSON: %v\n%s", doc, typ, err, got)
	}
	var walk func(f, e any, tagged bool, path string)
	walk = func(f, e any, tagged bool, path string) {
		switch f := f.(type) {
		case map[string]any:
			em, ok := e.(map[string]any)
			if !ok || len(em) != len(f) {
				t.Fatalf("document %q, eliding %q: at %s got %v, want %v", doc, typ, path, e, f)
			}
			isTag := len(f) == 2 && f["type"] == typ && f["value"] != nil
			for k, v := range f {
				walk(v, em[k], tagged || isTag && k == "value", path+"."+k)
			}
		case []any:
			es, ok := e.([]any)
			if !ok || len(es) != len(f) {
				t.Fatalf("document %q, eliding %q: at %s got %v, want %v", doc, typ, path, e, f)
			}
			for i := range f {
				walk(f[i], es[i], tagged, path+"[]")
			}
		case string:
			if e != f && !(tagged && e == "") {
				t.Fatalf("document %q, eliding %q: at %s got %q, want %q", doc, typ, path, e, f)
			}
		default:
			if e != f {
				t.Fatalf("document %q, eliding %q: at %s got %v, want %v", doc, typ, path, e, f)
			}
		}
	}
	walk(f, e, false, "$")
	return true
}

func TestElision(t *testing.T) {
	const csv = "olm.csv.metadata"
	for _, c := range []struct {
		name, doc, typ string
		want           string // "" declined
		elided         bool
	}{
		{"a property's strings, at any depth, and no other value", "- type: olm.csv.metadata\n  value:\n    description: |\n      long\n" +
			"      text\n    displayName: \"q\\tq\"\n    keywords:\n    - a\n    - 'b'\n    installModes:\n    - supported: true\n" +
			"      type: OwnNamespace\n    m: 5\n    z: ~\n    e: {}\n- type: olm.package\n  value:\n    packageName: p\n",
			csv, `[{"type":"olm.csv.metadata","value":{"description":"","displayName":"","e":{},"installModes":[{"supported":true,"type":""}],` +
				`"keywords":["",""],"m":5,"z":null}},{"type":"olm.package","value":{"packageName":"p"}}]`, true},
		{"a quoted key or type", "\"type\": 'olm.csv.metadata'\n\"value\": >\n  folded\n", csv, `{"type":"olm.csv.metadata","value":""}`, true},
		{"a string value itself", "type: x\nvalue: plain text\n", "x", `{"type":"x","value":""}`, true},
		{"keys are kept", "type: x\nvalue:\n  k: v\n  'q': 1\n", "x", `{"type":"x","value":{"k":"","q":1}}`, true},
		{"another type", "type: olm.package\nvalue:\n  packageName: p\n", csv, `{"type":"olm.package","value":{"packageName":"p"}}`, false},
		{"no type asked", "type: x\nvalue: w\n", "", `{"type":"x","value":"w"}`, false},
		{"value before type", "value: w\ntype: x\n", "x", `{"type":"x","value":"w"}`, false},
		{"a key before type", "a: 1\ntype: x\nvalue: w\n", "x", `{"a":1,"type":"x","value":"w"}`, false},
		{"type spelled twice, the tag first", "type: x\ntype: a\nvalue: w\n", "x", `{"type":"a","value":"w"}`, false},
		{"type spelled twice before value", "type: a\ntype: x\nvalue: w\n", "x", `{"type":"x","value":"w"}`, false},
		{"type in another case", "Type: x\nvalue: w\n", "x", `{"Type":"x","value":"w"}`, false},
		{"value in another case", "type: x\nValue: w\n", "x", `{"Value":"w","type":"x"}`, false},
		// a key after the value could make it another property's (a later "type", "Type", "value"...)
		{"a key after the value", "type: x\nvalue: w\ntype: z\n", "x", "", false},
		{"any key after the value", "type: x\nvalue: w\nz: 1\n", "x", "", false},
		{"a type that is not a string", "type: 1\nvalue: w\n", "1", `{"type":1,"value":"w"}`, false},
		{"a tagged value with no string", "type: x\nvalue:\n  m: 1\n", "x", `{"type":"x","value":{"m":1}}`, true},
		{"nested tags", "type: x\nvalue:\n  type: x\n  value: w\n", "x", `{"type":"x","value":{"type":"","value":""}}`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			full, ok := Convert([]byte(c.doc))
			if !ok {
				t.Fatalf("declined without elision")
			}
			got, elided, ok := AppendConvertScanned(nil, []byte(c.doc), Options{ElideType: c.typ})
			if c.want == "" {
				if ok {
					t.Fatalf("converted %s, want declined", got)
				}
				return
			}
			if !ok || string(got) != c.want || elided != c.elided {
				t.Fatalf("got %s (ok %v, elided %v), want %s (elided %v); without elision %s", got, ok, elided, c.want, c.elided, full)
			}
			sameElided(t, []byte(c.doc), full, c.typ)
		})
	}
}

// The real shapes elide most of their text.
func TestElisionOfRealShapes(t *testing.T) {
	doc := []byte(csvMetadataBundle(50))
	full, ok := Convert(doc)
	if !ok {
		t.Fatal("declined")
	}
	got, elided, ok := AppendConvertScanned(nil, doc, Options{ElideType: "olm.csv.metadata"})
	if !ok || !elided || len(got) > len(full)/3 {
		t.Fatalf("ok %v, elided %v: %d bytes of JSON, %d without elision", ok, elided, len(got), len(full))
	}
	if !strings.Contains(string(got), `"image":"quay.io/example/op@sha256:`) {
		t.Fatalf("a string outside the metadata was elided: %.300s", got)
	}
	sameElided(t, doc, full, "olm.csv.metadata")
}
