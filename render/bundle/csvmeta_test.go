package bundle

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
)

// jsonShape describes the JSON a Go type decodes: field keys (from json tags or field names, sorted),
// element types and kinds; json.RawMessage is "raw".
func jsonShape(t reflect.Type) string {
	if t == reflect.TypeFor[json.RawMessage]() {
		return "raw"
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + jsonShape(t.Elem())
	case reflect.Slice:
		return "[]" + jsonShape(t.Elem())
	case reflect.Map:
		return "map[" + t.Key().Kind().String() + "]" + jsonShape(t.Elem())
	case reflect.Struct:
		var fields []string
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "" {
				tag = f.Name
			}
			fields = append(fields, tag+" "+jsonShape(f.Type))
		}
		slices.Sort(fields)
		return "{" + strings.Join(fields, "; ") + "}"
	}
	return t.Kind().String()
}

// catalog.CSVMetadata, what validation decodes an olm.csv.metadata value into, has the shape of the value
// Render writes (the operators/v1alpha1 types' fields, through kubetypes): the same keys with the same
// types, so the two cannot drift.
func TestCatalogCSVMetadataHasTheRenderedShape(t *testing.T) {
	ours, rendered := jsonShape(reflect.TypeFor[catalog.CSVMetadata]()), jsonShape(reflect.TypeFor[csvMetadataValue]())
	if ours != rendered {
		t.Fatalf("catalog.CSVMetadata differs from the olm.csv.metadata value Render writes:\ncatalog: %s\nrender:  %s\n%s",
			ours, rendered, firstDifference(ours, rendered))
	}
}

func firstDifference(a, b string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("first difference at %d: %q vs %q", i, a[max(0, i-40):min(len(a), i+40)], b[max(0, i-40):min(len(b), i+40)])
		}
	}
	return "one is a prefix of the other"
}
