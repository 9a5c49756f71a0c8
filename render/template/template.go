// Package template renders catalog templates as `opm alpha render-template` v1.73.0 does: the
// olm.template.basic, olm.semver and olm.template.substitutes schemas, with an optional
// --migrate-level, into a file-based catalog that catalog.WriteJSON and catalog.WriteYAML print byte for
// byte as opm prints it.
//
// Bundle images come from a Source (a registry, a cache seeded from committed catalogs, or both). Every
// error carries opm's own message and the template line it is about.
package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// Schemas of the three template types.
const (
	SchemaBasic       = "olm.template.basic"
	SchemaSemver      = "olm.semver"
	SchemaSubstitutes = "olm.template.substitutes"
)

// Migration levels of --migrate-level.
const (
	MigrateNone        = "none"
	MigrateCSVMetadata = "bundle-object-to-csv-metadata"
	MigrateAll         = "all"
)

// MaxTemplateSize bounds a template file.
const MaxTemplateSize = 8 << 20

// Options tune Render.
type Options struct {
	// Type is the template type as opm's TYPE argument ("basic", "semver", "substitutes"); empty detects
	// it from the template's schema.
	Type string
	// MigrateLevel is --migrate-level: "", "none", "bundle-object-to-csv-metadata" or "all".
	MigrateLevel string
	// OPMVersion is the opm release whose rendering to reproduce (DefaultOPMVersion when empty).
	OPMVersion OPMVersion
}

// Source renders one bundle image reference, as written in a template, into a bundle.
type Source interface {
	Bundle(ctx context.Context, image string, csvMetadata bool) (*Bundle, error)
}

// Bundle is a rendered bundle image and what the semver template takes from its ClusterServiceVersion for
// the package blob.
type Bundle struct {
	*catalog.Bundle
	// Description and Icon are the ClusterServiceVersion's spec.description and first spec.icon, as
	// opm's semver template reads them (Icon nil when it has none or they do not decode).
	Description string
	Icon        *catalog.Icon
	// HeadKnown tells that Description and Icon are known. They are not for a bundle known only in the
	// olm.csv.metadata form (no ClusterServiceVersion), unless a committed semver render told them.
	HeadKnown bool
}

// Error is a template that opm refuses: opm's message and where in the template it is about.
type Error struct {
	File string
	// Line is 1-based; 0 when the error is about no particular line.
	Line int
	// Msg is opm's error message, as `opm alpha render-template` prints it after "Error: ".
	Msg string
	// Err is the cause, when a bundle image failed.
	Err error
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// typeSchemas maps opm's TYPE argument to the schema.
var typeSchemas = map[string]string{"basic": SchemaBasic, "semver": SchemaSemver, "substitutes": SchemaSubstitutes}

// Render renders the template data (read from file, named in errors) with bundles from src.
func Render(ctx context.Context, data []byte, file string, src Source, opts Options) (*catalog.Catalog, error) {
	if len(data) > MaxTemplateSize {
		return nil, &Error{File: file, Msg: fmt.Sprintf("template is larger than %d bytes", MaxTemplateSize)}
	}
	csvMeta, err := migrates(opts.MigrateLevel)
	if err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	opm := opts.OPMVersion
	if opm == "" {
		opm = DefaultOPMVersion
	} else if _, err := ParseOPMVersion(string(opm)); err != nil {
		return nil, &Error{File: file, Msg: err.Error()}
	}
	t := &run{file: file, data: data, src: src, csvMeta: csvMeta, lines: newLines(data), opm: opm}
	schema := typeSchemas[opts.Type]
	if opts.Type == "" {
		s, err := detectSchema(data)
		if err != nil {
			return nil, t.fail(t.lines.top("schema"), "auto-detecting template type: "+err.Error(), nil)
		}
		schema = s
	} else if schema == "" {
		return nil, &Error{File: file, Msg: fmt.Sprintf("invalid template type %q, must be one of: [basic semver substitutes]", opts.Type)}
	}
	if schema == SchemaSubstitutes && opm == OPMv1_46_0 {
		return nil, t.fail(t.lines.top("schema"), "opm v1.46.0 has no olm.template.substitutes template (it came in a later release)", nil)
	}
	switch schema {
	case SchemaBasic:
		return t.basic(ctx)
	case SchemaSemver:
		return t.semver(ctx)
	default:
		return t.substitutes(ctx)
	}
}

// migrates tells whether a migrate level includes the olm.csv.metadata migration, with opm's error for an
// unknown level.
func migrates(level string) (bool, error) {
	switch level {
	case "", MigrateNone:
		return false, nil
	case MigrateCSVMetadata, MigrateAll:
		return true, nil
	}
	return false, fmt.Errorf("unknown migration level %q", level)
}

// run is one Render call.
type run struct {
	file    string
	data    []byte
	src     Source
	csvMeta bool
	lines   *lines
	opm     OPMVersion
}

// fail is an opm error "rendering template: ..." at line.
func (t *run) fail(line int, msg string, cause error) error {
	return &Error{File: t.file, Line: line, Msg: msg, Err: cause}
}

func (t *run) failRender(line int, msg string, cause error) error {
	return t.fail(line, "rendering template: "+msg, cause)
}

// bundle renders image, with opm's "render reference" message on failure.
func (t *run) bundle(ctx context.Context, image string) (*Bundle, error) {
	b, err := t.src.Bundle(ctx, image, t.csvMeta)
	if err != nil {
		return nil, fmt.Errorf("render reference %q: %w", image, err)
	}
	return b, nil
}

// firstDocument decodes the first YAML or JSON document of data into JSON, as opm's template readers do.
func firstDocument(data []byte) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(&raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// detectSchema reads the schema of the first document, with opm's messages.
func detectSchema(data []byte) (string, error) {
	raw, err := firstDocument(data)
	if err != nil {
		return "", fmt.Errorf("decoding template input: %v", err)
	}
	var schemaDoc struct {
		Schema string `json:"schema"`
	}
	if err := json.Unmarshal(raw, &schemaDoc); err != nil {
		return "", fmt.Errorf("unmarshalling template schema: %v", err)
	}
	switch schemaDoc.Schema {
	case "":
		return "", errors.New("template input missing required 'schema' field")
	case SchemaBasic, SchemaSemver, SchemaSubstitutes:
		return schemaDoc.Schema, nil
	}
	return "", fmt.Errorf("unknown template schema: %s", schemaDoc.Schema)
}
