package githubtest

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// validator checks JSON values (decoded with json.Decoder.UseNumber) against OpenAPI 3.0 schemas.
//
// Requests are checked as GitHub documents them: types, nullable, enum, required, properties,
// additionalProperties, items, oneOf/anyOf (any alternative may match), allOf, lengths, bounds, patterns
// and date-time formats. Responses (shape mode) skip required, since the fake emits the fields a client
// reads rather than GitHub's full objects, and treat every object that declares properties as closed, so
// a misspelt or invented field in a fake response is caught.
type validator struct {
	sp    *spec
	shape bool
}

// maxViolations bounds the report for one value.
const maxViolations = 20

func (v *validator) validate(x any, s *schema, at string) []string {
	var out []string
	v.check(x, s, at, &out)
	if len(out) > maxViolations {
		out = append(out[:maxViolations], fmt.Sprintf("... and %d more", len(out)-maxViolations))
	}
	return out
}

func (v *validator) check(x any, s *schema, at string, out *[]string) {
	s, err := v.sp.resolve(s)
	if err != nil {
		*out = append(*out, fmt.Sprintf("%s: %v", at, err))
		return
	}
	if s == nil {
		return
	}
	if x == nil {
		if s.Nullable || enumHasNull(s.Enum) {
			return
		}
		if s.Type != "" {
			*out = append(*out, fmt.Sprintf("%s: null is not allowed (want %s, not nullable)", at, s.Type))
			return
		}
		// A typeless schema rejects null only through its enum or alternatives, checked below.
	}
	if s.Type != "" && !hasType(x, s.Type) {
		*out = append(*out, fmt.Sprintf("%s: want %s, got %s", at, s.Type, describe(x)))
		return
	}
	if len(s.Enum) > 0 && !inEnum(x, s.Enum) {
		*out = append(*out, fmt.Sprintf("%s: %s is not one of %s", at, describe(x), enumList(s.Enum)))
	}
	switch x := x.(type) {
	case string:
		v.checkString(x, s, at, out)
	case json.Number:
		checkNumber(x, s, at, out)
	case []any:
		v.checkArray(x, s, at, out)
	case map[string]any:
		v.checkObject(x, s, at, out)
	}
	for i, sub := range s.AllOf {
		v.check(x, sub, fmt.Sprintf("%s (allOf #%d)", at, i), out)
	}
	for _, alts := range [][]*schema{s.OneOf, s.AnyOf} {
		if len(alts) == 0 {
			continue
		}
		var why []string
		matched := false
		for i, alt := range alts {
			var sub []string
			v.check(x, alt, at, &sub)
			if len(sub) == 0 {
				matched = true
				break
			}
			why = append(why, fmt.Sprintf("#%d: %s", i, strings.Join(sub, "; ")))
		}
		if !matched {
			*out = append(*out, fmt.Sprintf("%s: matches none of %d alternatives [%s]", at, len(alts), strings.Join(why, " | ")))
		}
	}
}

func (v *validator) checkString(x string, s *schema, at string, out *[]string) {
	n := utf8.RuneCountInString(x)
	if s.MinLength != nil && n < *s.MinLength {
		*out = append(*out, fmt.Sprintf("%s: length %d is below minLength %d", at, n, *s.MinLength))
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		*out = append(*out, fmt.Sprintf("%s: length %d exceeds maxLength %d", at, n, *s.MaxLength))
	}
	if re := s.compiledPattern(); re != nil && !re.MatchString(x) {
		*out = append(*out, fmt.Sprintf("%s: %q does not match pattern %s", at, x, s.Pattern))
	}
	if s.Format == "date-time" {
		if _, err := time.Parse(time.RFC3339, x); err != nil {
			*out = append(*out, fmt.Sprintf("%s: %q is not an RFC 3339 date-time", at, x))
		}
	}
}

func checkNumber(x json.Number, s *schema, at string, out *[]string) {
	f, err := x.Float64()
	if err != nil {
		*out = append(*out, fmt.Sprintf("%s: %s is not a number", at, x))
		return
	}
	if s.Minimum != nil && f < *s.Minimum {
		*out = append(*out, fmt.Sprintf("%s: %s is below minimum %v", at, x, *s.Minimum))
	}
	if s.Maximum != nil && f > *s.Maximum {
		*out = append(*out, fmt.Sprintf("%s: %s exceeds maximum %v", at, x, *s.Maximum))
	}
}

func (v *validator) checkArray(x []any, s *schema, at string, out *[]string) {
	if s.MinItems != nil && len(x) < *s.MinItems {
		*out = append(*out, fmt.Sprintf("%s: %d items, below minItems %d", at, len(x), *s.MinItems))
	}
	if s.MaxItems != nil && len(x) > *s.MaxItems {
		*out = append(*out, fmt.Sprintf("%s: %d items, above maxItems %d", at, len(x), *s.MaxItems))
	}
	if s.UniqueItems {
		seen := map[string]int{}
		for i, e := range x {
			k, _ := json.Marshal(e)
			if j, dup := seen[string(k)]; dup {
				*out = append(*out, fmt.Sprintf("%s: items %d and %d are equal (uniqueItems)", at, j, i))
			}
			seen[string(k)] = i
		}
	}
	if s.Items != nil {
		for i, e := range x {
			v.check(e, s.Items, fmt.Sprintf("%s/%d", at, i), out)
		}
	}
}

func (v *validator) checkObject(x map[string]any, s *schema, at string, out *[]string) {
	if !v.shape {
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				*out = append(*out, fmt.Sprintf("%s: missing required property %q", at, r))
			}
		}
	}
	if s.MaxProperties != nil && len(x) > *s.MaxProperties {
		*out = append(*out, fmt.Sprintf("%s: %d properties, above maxProperties %d", at, len(x), *s.MaxProperties))
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	closed := s.AdditionalProperties != nil && !s.AdditionalProperties.Allowed
	if v.shape && len(s.Properties) > 0 && s.AdditionalProperties == nil && len(s.OneOf)+len(s.AnyOf)+len(s.AllOf) == 0 {
		closed = true
	}
	for _, k := range keys {
		if p, ok := s.Properties[k]; ok {
			v.check(x[k], p, at+"/"+k, out)
			continue
		}
		switch {
		case closed:
			*out = append(*out, fmt.Sprintf("%s: unknown property %q (additional properties are not allowed)", at, k))
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			v.check(x[k], s.AdditionalProperties.Schema, at+"/"+k, out)
		}
	}
}

func hasType(x any, typ string) bool {
	switch typ {
	case "string":
		_, ok := x.(string)
		return ok
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "object":
		_, ok := x.(map[string]any)
		return ok
	case "array":
		_, ok := x.([]any)
		return ok
	case "number":
		_, ok := x.(json.Number)
		return ok
	case "integer":
		n, ok := x.(json.Number)
		if !ok {
			return false
		}
		if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			return true
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "null":
		return x == nil
	}
	return true // an unknown type keyword constrains nothing
}

func enumHasNull(enum []any) bool {
	for _, e := range enum {
		if e == nil {
			return true
		}
	}
	return false
}

// inEnum compares a request value with enum values decoded from the description (numbers as float64).
func inEnum(x any, enum []any) bool {
	for _, e := range enum {
		switch e := e.(type) {
		case float64:
			if n, ok := x.(json.Number); ok {
				if f, err := n.Float64(); err == nil && f == e {
					return true
				}
			}
		default:
			if a, b := fmt.Sprint(x), fmt.Sprint(e); sameKind(x, e) && a == b {
				return true
			}
		}
	}
	return false
}

func sameKind(a, b any) bool {
	switch a.(type) {
	case string:
		_, ok := b.(string)
		return ok
	case bool:
		_, ok := b.(bool)
		return ok
	case nil:
		return b == nil
	}
	return false
}

func enumList(enum []any) string {
	parts := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		parts[i] = string(b)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// describe names a JSON value's type and, for scalars, its value.
func describe(x any) string {
	switch x := x.(type) {
	case nil:
		return "null"
	case string:
		if len(x) > 40 {
			x = x[:40] + "..."
		}
		return fmt.Sprintf("string %q", x)
	case bool:
		return fmt.Sprintf("boolean %v", x)
	case json.Number:
		return "number " + string(x)
	case []any:
		return fmt.Sprintf("array of %d", len(x))
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", x)
}
