package kubetypes

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	kjson "sigs.k8s.io/json"
)

// The stand-ins for the types with their own UnmarshalJSON. Each accepts and refuses what the real one
// does (custom_test.go decodes the same inputs with both); none keeps more than a decode needs.

// Time stands for metav1.Time: null, or a string in RFC 3339.
type Time struct {
	Time time.Time
}

func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	parsed, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// FieldsV1 stands for metav1.FieldsV1 (managed fields): any JSON value.
type FieldsV1 struct {
	Raw []byte
}

func (f *FieldsV1) UnmarshalJSON(b []byte) error {
	if !bytes.Equal(b, []byte("null")) {
		f.Raw = append(f.Raw[:0], b...)
	}
	return nil
}

// IntOrString stands for intstr.IntOrString: a JSON string, or what decodes into an int32.
type IntOrString struct {
	IsString bool
	Int      int32
	Str      string
}

func (v *IntOrString) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		v.IsString = true
		return json.Unmarshal(b, &v.Str)
	}
	v.IsString = false
	return json.Unmarshal(b, &v.Int)
}

// Quantity stands for resource.Quantity: null, or a JSON string or number that resource.ParseQuantity
// accepts once the quotes are cut off (escapes are not decoded, as in apimachinery).
type Quantity struct {
	Value string
}

func (q *Quantity) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		q.Value = ""
		return nil
	}
	if l := len(b); l >= 2 && b[0] == '"' && b[l-1] == '"' {
		b = b[1 : l-1]
	}
	s := strings.TrimSpace(string(b))
	if _, err := resource.ParseQuantity(s); err != nil {
		return err
	}
	q.Value = s
	return nil
}

// JSON stands for the apiextensions JSON type (defaults, enums, examples): any JSON value.
type JSON struct {
	Raw []byte
}

func (j *JSON) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && !bytes.Equal(b, []byte("null")) {
		j.Raw = append(j.Raw[:0], b...)
	}
	return nil
}

// The JSON-schema unions of the CRD types decode their schemas with sigs.k8s.io/json (case-sensitive, as
// apimachinery's util/json does); S is the schema type of the CRD version.

// SchemaOrBool stands for JSONSchemaPropsOrBool: a schema object, true or false.
type SchemaOrBool[S any] struct {
	Allows bool
	Schema *S
}

func (s *SchemaOrBool[S]) UnmarshalJSON(b []byte) error {
	var v SchemaOrBool[S]
	switch {
	case len(b) == 0:
	case b[0] == '{':
		var sch S
		if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &sch); err != nil {
			return err
		}
		v.Allows, v.Schema = true, &sch
	case string(b) == "true":
		v.Allows = true
	case string(b) == "false":
	default:
		return errors.New("boolean or JSON schema expected")
	}
	*s = v
	return nil
}

// SchemaOrList stands for the unions of a schema object and a list: JSONSchemaPropsOrArray (a list of
// schemas, SchemaOrArray) and JSONSchemaPropsOrStringArray (a list of strings, SchemaOrStringArray). Any
// other value is ignored, as there.
type SchemaOrList[S, E any] struct {
	Schema *S
	List   []E
}

type (
	SchemaOrArray[S any]       = SchemaOrList[S, S]
	SchemaOrStringArray[S any] = SchemaOrList[S, string]
)

func (s *SchemaOrList[S, E]) UnmarshalJSON(b []byte) error {
	var v SchemaOrList[S, E]
	switch {
	case len(b) < 2:
	case b[0] == '{':
		var sch S
		if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &sch); err != nil {
			return err
		}
		v.Schema = &sch
	case b[0] == '[':
		if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &v.List); err != nil {
			return err
		}
	}
	*s = v
	return nil
}
