package githubtest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// specFile is GitHub's published OpenAPI description of api.github.com (OpenAPI 3.0.3), relative to the
// shared data directory.
const specFile = "github-openapi/api.github.com.json"

// spec is the parsed subset of the OpenAPI description the fake needs: operations (parameters, request
// bodies, response schemas) and the components they reference. It is read-only after loading.
type spec struct {
	Paths      map[string]*pathItem `json:"paths"`
	Components struct {
		Schemas    map[string]*schema    `json:"schemas"`
		Parameters map[string]*parameter `json:"parameters"`
		Responses  map[string]*response  `json:"responses"`
	} `json:"components"`

	templates []*template // compiled path templates, see match.go
}

type pathItem struct {
	Parameters []*parameter `json:"parameters"`
	Get        *operation   `json:"get"`
	Put        *operation   `json:"put"`
	Post       *operation   `json:"post"`
	Delete     *operation   `json:"delete"`
	Patch      *operation   `json:"patch"`
	Head       *operation   `json:"head"`
	Options    *operation   `json:"options"`
}

func (p *pathItem) operations() map[string]*operation {
	all := map[string]*operation{
		"GET": p.Get, "PUT": p.Put, "POST": p.Post, "DELETE": p.Delete,
		"PATCH": p.Patch, "HEAD": p.Head, "OPTIONS": p.Options,
	}
	for m, op := range all {
		if op == nil {
			delete(all, m)
		}
	}
	return all
}

type operation struct {
	OperationID string               `json:"operationId"`
	Parameters  []*parameter         `json:"parameters"`
	RequestBody *requestBody         `json:"requestBody"`
	Responses   map[string]*response `json:"responses"`
}

type parameter struct {
	Ref          string  `json:"$ref"`
	Name         string  `json:"name"`
	In           string  `json:"in"`
	Required     bool    `json:"required"`
	Schema       *schema `json:"schema"`
	MultiSegment bool    `json:"x-multi-segment"`
}

type requestBody struct {
	Required bool                 `json:"required"`
	Content  map[string]mediaType `json:"content"`
}

type response struct {
	Ref     string               `json:"$ref"`
	Content map[string]mediaType `json:"content"`
}

type mediaType struct {
	Schema *schema `json:"schema"`
}

// schema is an OpenAPI 3.0 Schema Object, limited to the keywords the validator enforces.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 string             `json:"type"`
	Format               string             `json:"format"`
	Nullable             bool               `json:"nullable"`
	Enum                 []any              `json:"enum"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	AdditionalProperties *additional        `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	OneOf                []*schema          `json:"oneOf"`
	AnyOf                []*schema          `json:"anyOf"`
	AllOf                []*schema          `json:"allOf"`
	MinLength            *int               `json:"minLength"`
	MaxLength            *int               `json:"maxLength"`
	MinItems             *int               `json:"minItems"`
	MaxItems             *int               `json:"maxItems"`
	MaxProperties        *int               `json:"maxProperties"`
	UniqueItems          bool               `json:"uniqueItems"`
	Minimum              *float64           `json:"minimum"`
	Maximum              *float64           `json:"maximum"`
	Pattern              string             `json:"pattern"`

	patternOnce sync.Once
	pattern     *regexp.Regexp // nil when Pattern is empty or not RE2-compatible
}

// additional is additionalProperties: either a boolean or a schema.
type additional struct {
	Allowed bool
	Schema  *schema
}

func (a *additional) UnmarshalJSON(data []byte) error {
	if err := json.Unmarshal(data, &a.Allowed); err == nil {
		return nil
	}
	a.Allowed = true
	return json.Unmarshal(data, &a.Schema)
}

// compiledPattern compiles Pattern once; ECMA-262 patterns RE2 cannot compile are not enforced.
func (s *schema) compiledPattern() *regexp.Regexp {
	s.patternOnce.Do(func() {
		if s.Pattern != "" {
			s.pattern, _ = regexp.Compile(s.Pattern)
		}
	})
	return s.pattern
}

var (
	specOnce   sync.Once
	specLoaded *spec
	specErr    error
)

// loadSpec parses the OpenAPI description once per process.
func loadSpec() (*spec, error) {
	specOnce.Do(func() {
		specLoaded, specErr = parseSpecFile(specPath())
	})
	return specLoaded, specErr
}

// specPath is $CATALOGBOT_SHARED_DATA/github-openapi/api.github.com.json, defaulting to the shared data
// directory next to the checkout (../shared/data from the repository root).
func specPath() string {
	if dir := os.Getenv("CATALOGBOT_SHARED_DATA"); dir != "" {
		return filepath.Join(dir, filepath.FromSlash(specFile))
	}
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("..", "..", "..", "shared", "data", filepath.FromSlash(specFile))
	}
	return filepath.Join(filepath.Dir(self), "..", "..", "..", "shared", "data", filepath.FromSlash(specFile))
}

func parseSpecFile(path string) (*spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading GitHub OpenAPI description: %w", err)
	}
	sp, err := parseSpec(data)
	if err != nil {
		return nil, fmt.Errorf("parsing GitHub OpenAPI description %s: %w", path, err)
	}
	return sp, nil
}

func parseSpec(data []byte) (*spec, error) {
	var sp spec
	if err := json.Unmarshal(data, &sp); err != nil {
		return nil, err
	}
	if len(sp.Paths) == 0 {
		return nil, errors.New("no paths")
	}
	for path, item := range sp.Paths {
		for method, op := range item.operations() {
			params, err := sp.resolveParameters(append(append([]*parameter(nil), item.Parameters...), op.Parameters...))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			op.Parameters = params
		}
		t, err := compileTemplate(path, item, &sp)
		if err != nil {
			return nil, err
		}
		sp.templates = append(sp.templates, t)
	}
	sort.Slice(sp.templates, func(i, j int) bool { return sp.templates[i].path < sp.templates[j].path })
	return &sp, nil
}

// resolveParameters replaces parameter references by the component parameters they name.
func (sp *spec) resolveParameters(params []*parameter) ([]*parameter, error) {
	out := make([]*parameter, 0, len(params))
	for _, p := range params {
		if p.Ref != "" {
			name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
			target := sp.Components.Parameters[name]
			if !ok || target == nil {
				return nil, fmt.Errorf("unresolvable parameter reference %q", p.Ref)
			}
			p = target
		}
		out = append(out, p)
	}
	return out, nil
}

// resolve follows a schema's $ref chain into components/schemas.
func (sp *spec) resolve(s *schema) (*schema, error) {
	for i := 0; s != nil && s.Ref != ""; i++ {
		name, ok := strings.CutPrefix(s.Ref, "#/components/schemas/")
		next := sp.Components.Schemas[name]
		if !ok || next == nil || i > 32 {
			return nil, fmt.Errorf("unresolvable schema reference %q", s.Ref)
		}
		s = next
	}
	return s, nil
}

// responseSchema is the application/json schema GitHub documents for op answering status, or nil.
func (sp *spec) responseSchema(op *operation, status int) *schema {
	r := op.Responses[fmt.Sprint(status)]
	if r == nil {
		return nil
	}
	if r.Ref != "" {
		name, _ := strings.CutPrefix(r.Ref, "#/components/responses/")
		r = sp.Components.Responses[name]
		if r == nil {
			return nil
		}
	}
	return r.Content["application/json"].Schema
}

// isNotExist reports whether err means the description file is absent.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
