package kubetypes

import (
	"encoding/json"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	kjson "sigs.k8s.io/json"
)

// customValues add to values the edge cases of each stand-in's own rules.
var customValues = []string{
	`"2024-01-02T03:04:05+01:00"`, `"2024-01-02T03:04:05.123Z"`, `"2024-13-02T03:04:05Z"`, `"null"`, `"1Ki"`,
	`"1.5Gi"`, `"1e-3"`, `"1E3"`, `"+1"`, `"-1"`, `"0"`, `"00"`, `"1.2.3Gi"`, `"1 Gi"`, `"Gi"`, `"1Gi1"`,
	`"1e"`, `"1e+"`, `"0.0000000001"`, `"999999999999999999999999999"`, `"1e99999999999"`, `1`, `-1.5e3`,
	`"\"1\""`, `{"type":"object","properties":{"a":{"type":"string"}}}`, `{"Type":"x"}`, `{"type":1}`,
	`[{"type":1}]`, `["a","b"]`, `["a",1]`, `[null]`, `{"items":"x"}`, `{"items":{"type":1}}`,
}

// pair decodes one value into the real type and the stand-in, as a field by value and by pointer, with
// encoding/json and with sigs.k8s.io/json.
func pair[R, C any](t *testing.T, name string) {
	t.Run(name, func(t *testing.T) {
		for _, v := range append(append([]string{}, values...), customValues...) {
			doc := []byte(`{"v":` + v + `,"p":` + v + `}`)
			type real struct {
				V R  `json:"v"`
				P *R `json:"p"`
			}
			type copied struct {
				V C  `json:"v"`
				P *C `json:"p"`
			}
			var r real
			var c copied
			if re, ce := json.Unmarshal(doc, &r), json.Unmarshal(doc, &c); (re == nil) != (ce == nil) {
				t.Errorf("encoding/json, %s: the real type says %v, the stand-in says %v", v, re, ce)
			}
			var rk real
			var ck copied
			re, ce := kjson.UnmarshalCaseSensitivePreserveInts(doc, &rk), kjson.UnmarshalCaseSensitivePreserveInts(doc, &ck)
			if (re == nil) != (ce == nil) {
				t.Errorf("sigs.k8s.io/json, %s: the real type says %v, the stand-in says %v", v, re, ce)
			}
		}
	})
}

// TestStandInsDecodeAsTheRealTypes holds each hand-written stand-in to the type it stands for, value by
// value.
func TestStandInsDecodeAsTheRealTypes(t *testing.T) {
	pair[metav1.Time, Time](t, "Time")
	pair[metav1.FieldsV1, FieldsV1](t, "FieldsV1")
	pair[resource.Quantity, Quantity](t, "Quantity")
	pair[intstr.IntOrString, IntOrString](t, "IntOrString")
	pair[apiextv1.JSON, JSON](t, "JSON")
	pair[apiextv1beta1.JSON, JSON](t, "JSONv1beta1")
	pair[apiextv1.JSONSchemaPropsOrBool, SchemaOrBool[ExtV1JSONSchemaProps]](t, "OrBool")
	pair[apiextv1beta1.JSONSchemaPropsOrBool, SchemaOrBool[ExtV1beta1JSONSchemaProps]](t, "OrBoolv1beta1")
	pair[apiextv1.JSONSchemaPropsOrArray, SchemaOrArray[ExtV1JSONSchemaProps]](t, "OrArray")
	pair[apiextv1beta1.JSONSchemaPropsOrArray, SchemaOrArray[ExtV1beta1JSONSchemaProps]](t, "OrArrayv1beta1")
	pair[apiextv1.JSONSchemaPropsOrStringArray, SchemaOrStringArray[ExtV1JSONSchemaProps]](t, "OrStringArray")
	pair[apiextv1beta1.JSONSchemaPropsOrStringArray, SchemaOrStringArray[ExtV1beta1JSONSchemaProps]](t, "OrStringArrayv1beta1")
}
