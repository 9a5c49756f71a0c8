// Package catalog is catalogbot's own model of an OLM file-based catalog (FBC): the blobs, where each came
// from, a streaming loader, a deterministic writer and upgrade-graph helpers. It does no I/O beyond files.
package catalog

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"

	"github.com/catalogbot/catalogbot/diag"
)

// Schema names of the blob kinds OLM knows.
const (
	SchemaPackage      = "olm.package"
	SchemaChannel      = "olm.channel"
	SchemaBundle       = "olm.bundle"
	SchemaDeprecations = "olm.deprecations"
)

// Property type names with a typed decoding (see property.go).
const (
	PropertyPackage         = "olm.package"
	PropertyPackageRequired = "olm.package.required"
	PropertyGVK             = "olm.gvk"
	PropertyGVKRequired     = "olm.gvk.required"
	PropertyBundleObject    = "olm.bundle.object"
	PropertyCSVMetadata     = "olm.csv.metadata"
	PropertyChannel         = "olm.channel"
)

// Pos is where a blob (or a value inside it) starts: a slash-separated path relative to the catalog root,
// and a 1-based line and column. The zero Pos means "unknown".
type Pos struct {
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
}

// Catalog is a whole file-based catalog. Slices keep the order blobs were read in (files in lexical path
// order, blobs in file order), so everything derived from them is deterministic.
type Catalog struct {
	Packages     []*Package
	Channels     []*Channel
	Bundles      []*Bundle
	Deprecations []*Deprecation
	// Others are blobs of schemas OLM does not model, kept as-is.
	Others []*Meta
	// Dir is where the catalog's files are in the repository (LoadOptions.Dir): its positions are
	// relative to it, and a check's diagnostic names a position's file as Dir.File(pos.File).
	Dir diag.Dir
}

// Package is an olm.package blob.
type Package struct {
	Schema         string     `json:"schema"`
	Name           string     `json:"name"`
	DefaultChannel string     `json:"defaultChannel"`
	Icon           *Icon      `json:"icon,omitempty"`
	Description    string     `json:"description,omitempty"`
	Properties     []Property `json:"properties,omitempty"`
	Pos            Pos        `json:"-"`
}

// Icon is a package icon; Data is the raw image (base64 in the file).
type Icon struct {
	Data      []byte `json:"base64data"`
	MediaType string `json:"mediatype"`
}

// Channel is an olm.channel blob.
type Channel struct {
	Schema     string         `json:"schema"`
	Name       string         `json:"name"`
	Package    string         `json:"package"`
	Entries    []ChannelEntry `json:"entries"`
	Properties []Property     `json:"properties,omitempty"`
	Pos        Pos            `json:"-"`
}

// ChannelEntry is one node of a channel's upgrade graph.
type ChannelEntry struct {
	Name      string   `json:"name"`
	Replaces  string   `json:"replaces,omitempty"`
	Skips     []string `json:"skips,omitempty"`
	SkipRange string   `json:"skipRange,omitempty"`
	// Pos is where the entry starts inside its channel's file.
	Pos Pos `json:"-"`
}

// Bundle is an olm.bundle blob.
type Bundle struct {
	Schema        string         `json:"schema"`
	Name          string         `json:"name,omitempty"`
	Package       string         `json:"package,omitempty"`
	Image         string         `json:"image"`
	Properties    []Property     `json:"properties,omitempty"`
	RelatedImages []RelatedImage `json:"relatedImages,omitempty"`
	Pos           Pos            `json:"-"`
	// Parsed holds the decoded properties (set by the loader).
	Parsed *Parsed `json:"-"`
}

// RelatedImage is an image a bundle's operator uses.
type RelatedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Deprecation is an olm.deprecations blob.
type Deprecation struct {
	Schema  string             `json:"schema"`
	Package string             `json:"package"`
	Entries []DeprecationEntry `json:"entries"`
	Pos     Pos                `json:"-"`
}

// DeprecationEntry deprecates the package, a channel or a bundle.
type DeprecationEntry struct {
	Reference PackageScopedReference `json:"reference"`
	Message   string                 `json:"message"`
}

// PackageScopedReference names an object inside a package by schema and name (name empty for the package).
type PackageScopedReference struct {
	Schema string `json:"schema"`
	Name   string `json:"name,omitempty"`
}

// Meta is any blob as read: its identifying fields and its exact JSON.
type Meta struct {
	Schema  string
	Package string
	Name    string
	Blob    json.RawMessage
	Pos     Pos
}

// Property is one typed property of a package, channel or bundle. Value is kept as raw JSON; typed
// accessors decode it (property.go).
type Property struct {
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

// Blobs yields the package and position of every blob of c: olm.package blobs first, then channels,
// bundles, deprecations and other schemas, each in c's order.
func (c *Catalog) Blobs() iter.Seq2[string, Pos] {
	return func(yield func(string, Pos) bool) {
		for _, p := range c.Packages {
			if !yield(p.Name, p.Pos) {
				return
			}
		}
		for _, ch := range c.Channels {
			if !yield(ch.Package, ch.Pos) {
				return
			}
		}
		for _, b := range c.Bundles {
			if !yield(b.Package, b.Pos) {
				return
			}
		}
		for _, d := range c.Deprecations {
			if !yield(d.Package, d.Pos) {
				return
			}
		}
		for _, o := range c.Others {
			if !yield(o.Package, o.Pos) {
				return
			}
		}
	}
}

// PackageNames lists, sorted and once each, every package a blob of c belongs to: its identity,
// whatever file holds the blob (olm.package names, and the package of every other blob).
func (c *Catalog) PackageNames() []string {
	seen := map[string]bool{}
	for pkg := range c.Blobs() {
		if pkg != "" {
			seen[pkg] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
