package githubtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"sort"
	"strings"
)

// checkRequest validates a routed request's path parameters, query string and body against its
// operation. It returns the decoded JSON body (nil when there is none) and the violations found.
func (sp *spec) checkRequest(rt route, query url.Values, contentType string, body []byte) (any, []string) {
	v := &validator{sp: sp}
	var out []string
	byName := map[string]*parameter{}
	for _, p := range rt.op.Parameters {
		switch p.In {
		case "path":
			val, ok := rt.params[p.Name]
			if !ok {
				out = append(out, fmt.Sprintf("path parameter %q is not bound", p.Name))
				continue
			}
			out = append(out, v.param([]string{val}, p.Schema, "path parameter "+p.Name)...)
		case "query":
			byName[p.Name] = p
			if _, ok := query[p.Name]; p.Required && !ok {
				if _, ok := query[p.Name+"[]"]; !ok {
					out = append(out, fmt.Sprintf("missing required query parameter %q", p.Name))
				}
			}
		}
	}
	names := make([]string, 0, len(query))
	for k := range query {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := byName[strings.TrimSuffix(k, "[]")]
		if p == nil {
			out = append(out, fmt.Sprintf("unknown query parameter %q", k))
			continue
		}
		out = append(out, v.param(query[k], p.Schema, "query parameter "+k)...)
	}
	decoded, bodyViolations := v.body(rt.op.RequestBody, contentType, body)
	if len(bodyViolations) > 0 {
		if ok := tolerated[rt.template]; ok != nil && ok(decoded) {
			bodyViolations = nil
		}
	}
	return decoded, append(out, bodyViolations...)
}

// tolerated lists request bodies GitHub's documentation accepts in prose although the schema omits them,
// by path template. Each entry names the documentation that allows it.
var tolerated = map[string]func(body any) bool{
	// "You can also pass an array of labels directly" (Add labels / Set labels for an issue); go-github's
	// AddLabelsToIssue and ReplaceLabelsForIssue send a bare array of names.
	"/repos/{owner}/{repo}/issues/{issue_number}/labels": isStringArray,
}

func isStringArray(body any) bool {
	arr, ok := body.([]any)
	if !ok || len(arr) == 0 {
		return false
	}
	for _, e := range arr {
		if _, ok := e.(string); !ok {
			return false
		}
	}
	return true
}

// param validates the string values of one path or query parameter, typing them as the schema says.
func (v *validator) param(values []string, s *schema, at string) []string {
	s, err := v.sp.resolve(s)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", at, err)}
	}
	if s == nil {
		return nil
	}
	if s.Type == "" && len(s.OneOf)+len(s.AnyOf) > 0 {
		var why []string
		for i, alt := range append(append([]*schema(nil), s.OneOf...), s.AnyOf...) {
			sub := v.param(values, alt, at)
			if len(sub) == 0 {
				return nil
			}
			why = append(why, fmt.Sprintf("#%d: %s", i, strings.Join(sub, "; ")))
		}
		return []string{fmt.Sprintf("%s: matches none of the alternatives [%s]", at, strings.Join(why, " | "))}
	}
	var x any
	if s.Type == "array" {
		items, _ := v.sp.resolve(s.Items)
		arr := make([]any, len(values))
		for i, val := range values {
			arr[i] = typed(val, items)
		}
		x = arr
	} else {
		if len(values) > 1 {
			return []string{fmt.Sprintf("%s: given %d times, want once", at, len(values))}
		}
		x = typed(values[0], s)
	}
	var out []string
	v.check(x, s, at, &out)
	return out
}

// typed turns a parameter string into the JSON value its schema's type calls for; a string that does not
// parse stays a string, so the validator reports the type mismatch.
func typed(val string, s *schema) any {
	if s == nil {
		return val
	}
	switch s.Type {
	case "integer", "number":
		if _, err := json.Number(val).Float64(); err == nil && val != "" {
			return json.Number(val)
		}
	case "boolean":
		switch val {
		case "true":
			return true
		case "false":
			return false
		}
	}
	return val
}

// body decodes and validates a request body against the operation's application/json schema.
func (v *validator) body(rb *requestBody, contentType string, body []byte) (any, []string) {
	// A literal null is what clients send for an absent optional body (go-github marshals a nil options
	// pointer); GitHub treats it as no body.
	if trimmed := bytes.TrimSpace(body); len(trimmed) == 0 || (string(trimmed) == "null" && (rb == nil || !rb.Required)) {
		if rb != nil && rb.Required {
			return nil, []string{"missing required request body"}
		}
		return nil, nil
	}
	if rb == nil {
		return nil, []string{fmt.Sprintf("the operation takes no request body, got %d bytes", len(body))}
	}
	media, ok := rb.Content["application/json"]
	if !ok {
		return nil, nil // text/plain, application/octet-stream and similar bodies are not JSON-checked
	}
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt != "application/json" {
		return nil, []string{fmt.Sprintf("Content-Type %q, want application/json", contentType)}
	}
	x, err := decodeJSON(body)
	if err != nil {
		return nil, []string{fmt.Sprintf("body is not valid JSON: %v", err)}
	}
	return x, v.validate(x, media.Schema, "body")
}

// decodeJSON decodes one JSON value, keeping numbers as json.Number.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON value")
	}
	return x, nil
}
