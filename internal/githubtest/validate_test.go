package githubtest

import (
	"strings"
	"testing"
)

// miniSpec is a hand-written description exercising the validator and the path matcher.
const miniSpec = `{
  "paths": {
    "/things/{id}": {"get": {"parameters": [{"$ref": "#/components/parameters/id"}]}},
    "/things/special": {"get": {}},
    "/repos/{owner}/{repo}/commits/{ref}": {"get": {"parameters": [
      {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
      {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
      {"name": "ref", "in": "path", "required": true, "schema": {"type": "string"}, "x-multi-segment": true}]}},
    "/repos/{owner}/{repo}/commits/{ref}/status": {"get": {"parameters": [
      {"name": "owner", "in": "path", "required": true, "schema": {"type": "string"}},
      {"name": "repo", "in": "path", "required": true, "schema": {"type": "string"}},
      {"name": "ref", "in": "path", "required": true, "schema": {"type": "string"}, "x-multi-segment": true},
      {"name": "flags", "in": "query", "schema": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}},
      {"name": "when", "in": "query", "required": true, "schema": {"type": "string", "format": "date-time"}},
      {"name": "n", "in": "query", "schema": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]}}]}},
    "/compare/{base}...{head}": {"get": {"parameters": [
      {"name": "base", "in": "path", "required": true, "schema": {"type": "string"}},
      {"name": "head", "in": "path", "required": true, "schema": {"type": "string"}}]}}
  },
  "components": {
    "parameters": {"id": {"name": "id", "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1}}},
    "schemas": {
      "thing": {"type": "object", "required": ["name"], "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
        "size": {"type": "integer", "nullable": true, "maximum": 10},
        "kind": {"type": "string", "enum": ["x", "y"]},
        "tags": {"type": "array", "maxItems": 2, "uniqueItems": true, "items": {"type": "string"}},
        "ref": {"$ref": "#/components/schemas/ref"},
        "either": {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
        "closed": {"type": "object", "additionalProperties": false, "properties": {"a": {"type": "boolean"}}},
        "map": {"type": "object", "additionalProperties": {"type": "integer"}},
        "both": {"allOf": [{"type": "object", "required": ["a"]}, {"type": "object", "required": ["b"]}]},
        "maybe": {"enum": ["on", null]}
      }},
      "ref": {"type": "object", "properties": {"sha": {"type": "string"}}}
    }
  }
}`

func mini(t *testing.T) *spec {
	t.Helper()
	sp, err := parseSpec([]byte(miniSpec))
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestValidatorKeywords(t *testing.T) {
	sp := mini(t)
	thing := &schema{Ref: "#/components/schemas/thing"}
	cases := []struct {
		body string
		want string // a fragment of the only violation; "" for valid
	}{
		{`{"name": "abc"}`, ""},
		{`{"name": "abc", "size": null, "maybe": null, "unknown": 1}`, ""},
		{`{"name": "abc", "size": 2.0, "either": [1, 2], "map": {"k": 3}}`, ""},
		{`{}`, `missing required property "name"`},
		{`null`, "null is not allowed"},
		{`{"name": 3}`, "body/name: want string, got number 3"},
		{`{"name": "a"}`, "below minLength 2"},
		{`{"name": "abcde"}`, "exceeds maxLength 4"},
		{`{"name": "ABC"}`, "does not match pattern"},
		{`{"name": "abc", "size": 1.5}`, "body/size: want integer, got number 1.5"},
		{`{"name": "abc", "size": 11}`, "exceeds maximum 10"},
		{`{"name": "abc", "kind": "z"}`, `string "z" is not one of ["x", "y"]`},
		{`{"name": "abc", "kind": null}`, "body/kind: null is not allowed"},
		{`{"name": "abc", "tags": ["a", "b", "c"]}`, "above maxItems 2"},
		{`{"name": "abc", "tags": ["a", "a"]}`, "uniqueItems"},
		{`{"name": "abc", "tags": [1]}`, "body/tags/0: want string"},
		{`{"name": "abc", "ref": {"sha": false}}`, "body/ref/sha: want string, got boolean false"},
		{`{"name": "abc", "either": {"x": 1}}`, "matches none of 2 alternatives"},
		{`{"name": "abc", "either": ["1"]}`, "#1: body/either/0: want integer"},
		{`{"name": "abc", "closed": {"a": true, "b": 1}}`, `unknown property "b"`},
		{`{"name": "abc", "map": {"k": "v"}}`, "body/map/k: want integer"},
		{`{"name": "abc", "both": {"a": 1}}`, `missing required property "b"`},
		{`{"name": "abc", "maybe": "off"}`, `string "off" is not one of ["on", null]`},
	}
	for _, tc := range cases {
		x, err := decodeJSON([]byte(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		got := (&validator{sp: sp}).validate(x, thing, "body")
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s: unexpected violations %q", tc.body, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s: violations %q, want one containing %q", tc.body, got, tc.want)
		}
	}
}

func TestShapeModeIgnoresRequiredAndClosesObjects(t *testing.T) {
	sp := mini(t)
	thing := &schema{Ref: "#/components/schemas/thing"}
	v := &validator{sp: sp, shape: true}
	x, _ := decodeJSON([]byte(`{"size": 1}`))
	if got := v.validate(x, thing, "response"); len(got) != 0 {
		t.Errorf("shape mode reports missing required fields: %q", got)
	}
	x, _ = decodeJSON([]byte(`{"size": 1, "colour": "red"}`))
	if got := v.validate(x, thing, "response"); len(got) != 1 || !strings.Contains(got[0], `unknown property "colour"`) {
		t.Errorf("shape mode violations %q, want the invented field", got)
	}
}

func TestFindRoute(t *testing.T) {
	sp := mini(t)
	cases := []struct {
		method, path, template string
		params                 map[string]string
	}{
		{"GET", "/things/7", "/things/{id}", map[string]string{"id": "7"}},
		{"GET", "/things/special", "/things/special", map[string]string{}},
		{"GET", "/repos/o/r/commits/abc", "/repos/{owner}/{repo}/commits/{ref}", map[string]string{"owner": "o", "repo": "r", "ref": "abc"}},
		{"GET", "/repos/o/r/commits/heads/main", "/repos/{owner}/{repo}/commits/{ref}", map[string]string{"owner": "o", "repo": "r", "ref": "heads/main"}},
		{"GET", "/repos/o/r/commits/heads/feat%2Fx/status", "/repos/{owner}/{repo}/commits/{ref}/status", map[string]string{"owner": "o", "repo": "r", "ref": "heads/feat/x"}},
		{"GET", "/compare/main...dev", "/compare/{base}...{head}", map[string]string{"base": "main", "head": "dev"}},
	}
	for _, tc := range cases {
		rt, err := sp.findRoute(tc.method, tc.path)
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if rt.template != tc.template || len(rt.params) != len(tc.params) {
			t.Errorf("%s matched %s %v, want %s %v", tc.path, rt.template, rt.params, tc.template, tc.params)
		}
		for k, v := range tc.params {
			if rt.params[k] != v {
				t.Errorf("%s: %s = %q, want %q", tc.path, k, rt.params[k], v)
			}
		}
	}
	for _, path := range []string{"/things", "/things/7/more", "/compare/main..dev", "/repos/o/r/commits"} {
		if rt, err := sp.findRoute("GET", path); err == nil {
			t.Errorf("%s matched %s", path, rt.template)
		}
	}
	if _, err := sp.findRoute("DELETE", "/things/7"); err == nil || !strings.Contains(err.Error(), "no DELETE operation for /things/{id}") {
		t.Errorf("DELETE: %v", err)
	}
}

func TestCheckRequestParameters(t *testing.T) {
	sp := mini(t)
	check := func(path, query string) []string {
		t.Helper()
		rt, err := sp.findRoute("GET", path)
		if err != nil {
			t.Fatal(err)
		}
		q, err := parseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		_, v := sp.checkRequest(rt, q, "", nil)
		return v
	}
	status := "/repos/o/r/commits/abc/status"
	for _, tc := range []struct{ path, query, want string }{
		{"/things/1", "", ""},
		{"/things/0", "", "path parameter id: 0 is below minimum 1"},
		{status, "when=2025-01-01T00:00:00Z&flags[]=a&flags[]=b&n=true", ""},
		{status, "when=2025-01-01T00:00:00Z&n=3", ""},
		{status, "", `missing required query parameter "when"`},
		{status, "when=noon", "is not an RFC 3339 date-time"},
		{status, "when=2025-01-01T00:00:00Z&flags=c", `query parameter flags/0: string "c" is not one of`},
		{status, "when=2025-01-01T00:00:00Z&n=x", "matches none of the alternatives"},
		{status, "when=2025-01-01T00:00:00Z&when=2025-01-01T00:00:00Z", "given 2 times"},
	} {
		got := check(tc.path, tc.query)
		switch {
		case tc.want == "" && len(got) != 0:
			t.Errorf("%s?%s: unexpected %q", tc.path, tc.query, got)
		case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
			t.Errorf("%s?%s: %q, want one containing %q", tc.path, tc.query, got, tc.want)
		}
	}
}
