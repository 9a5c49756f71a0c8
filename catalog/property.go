package catalog

import (
	"encoding/json"
	"fmt"
)

// Typed property values, shaped exactly like operator-registry's alpha/property types so that a value is
// accepted or rejected the same way.

// PackageProperty is the value of an olm.package property: the bundle's package and version.
type PackageProperty struct {
	PackageName string `json:"packageName"`
	Version     string `json:"version"`
	Release     string `json:"release,omitempty"`
}

// PackageRequired is the value of an olm.package.required property (a dependency).
type PackageRequired struct {
	PackageName  string `json:"packageName"`
	VersionRange string `json:"versionRange"`
}

// GVK is the value of olm.gvk and olm.gvk.required properties.
type GVK struct {
	Group   string `json:"group"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

// ChannelProperty is the value of an olm.channel property.
type ChannelProperty struct {
	ChannelName string `json:"channelName"`
	Priority    int    `json:"priority"`
}

// BundleObject is the value of an olm.bundle.object property: a base64 Kubernetes manifest.
type BundleObject struct {
	Data []byte `json:"data"`
}

// CSVMetadata is the value of an olm.csv.metadata property. It decodes as operator-framework/api's CSV
// types do, key for key and type for type, without importing Kubernetes
// (render/bundle's TestCatalogCSVMetadataHasTheRenderedShape holds it to them).
type CSVMetadata struct {
	Annotations               map[string]string     `json:"annotations,omitempty"`
	APIServiceDefinitions     apiServiceDefinitions `json:"apiServiceDefinitions,omitempty"`
	CustomResourceDefinitions crdDefinitions        `json:"crdDescriptions,omitempty"`
	Description               string                `json:"description,omitempty"`
	DisplayName               string                `json:"displayName,omitempty"`
	InstallModes              []InstallMode         `json:"installModes,omitempty"`
	Keywords                  []string              `json:"keywords,omitempty"`
	Labels                    map[string]string     `json:"labels,omitempty"`
	Links                     []appLink             `json:"links,omitempty"`
	Maintainers               []maintainer          `json:"maintainers,omitempty"`
	Maturity                  string                `json:"maturity,omitempty"`
	MinKubeVersion            string                `json:"minKubeVersion,omitempty"`
	NativeAPIs                []GVK                 `json:"nativeAPIs,omitempty"`
	Provider                  appLink               `json:"provider,omitempty"`
}

// InstallMode says whether a CSV supports an OperatorGroup install mode.
type InstallMode struct {
	Type      string `json:"type"`
	Supported bool   `json:"supported"`
}

type apiServiceDefinitions struct {
	Owned    []apiServiceDescription `json:"owned,omitempty"`
	Required []apiServiceDescription `json:"required,omitempty"`
}

type apiServiceDescription struct {
	Name              string              `json:"name"`
	Group             string              `json:"group"`
	Version           string              `json:"version"`
	Kind              string              `json:"kind"`
	DeploymentName    string              `json:"deploymentName,omitempty"`
	ContainerPort     int32               `json:"containerPort,omitempty"`
	DisplayName       string              `json:"displayName,omitempty"`
	Description       string              `json:"description,omitempty"`
	Resources         []resourceReference `json:"resources,omitempty"`
	StatusDescriptors []descriptor        `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []descriptor        `json:"specDescriptors,omitempty"`
	ActionDescriptor  []descriptor        `json:"actionDescriptors,omitempty"`
}

type crdDefinitions struct {
	Owned    []crdDescription `json:"owned,omitempty"`
	Required []crdDescription `json:"required,omitempty"`
}

type crdDescription struct {
	Name              string              `json:"name"`
	Version           string              `json:"version"`
	Kind              string              `json:"kind"`
	DisplayName       string              `json:"displayName,omitempty"`
	Description       string              `json:"description,omitempty"`
	Resources         []resourceReference `json:"resources,omitempty"`
	StatusDescriptors []descriptor        `json:"statusDescriptors,omitempty"`
	SpecDescriptors   []descriptor        `json:"specDescriptors,omitempty"`
	ActionDescriptor  []descriptor        `json:"actionDescriptors,omitempty"`
}

type resourceReference struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type descriptor struct {
	Path         string          `json:"path"`
	DisplayName  string          `json:"displayName,omitempty"`
	Description  string          `json:"description,omitempty"`
	XDescriptors []string        `json:"x-descriptors,omitempty"`
	Value        json.RawMessage `json:"value,omitempty"`
}

type appLink struct {
	Name string `json:"name,omitempty"`
	URL  string `json:"url,omitempty"`
}

type maintainer struct {
	Name  string `json:"name,omitempty"`
	Email string `json:"email,omitempty"`
}

// Parsed is what a bundle's properties say, decoded. Lean loads keep only this, not the raw values.
type Parsed struct {
	Packages         []PackageProperty
	PackagesRequired []PackageRequired
	GVKs             []GVK
	GVKsRequired     []GVK
	Channels         []ChannelProperty
	// Objects counts olm.bundle.object properties.
	Objects     int
	CSVMetadata *CSVMetadata
}

// PropertyError is a property value that does not decode into its type.
type PropertyError struct {
	Index int
	Type  string
	Off   int // byte offset of the value in its file (for positions); -1 when unknown
	Err   error
}

func (e *PropertyError) Error() string {
	return fmt.Sprintf("property[%d] of type %q: %v", e.Index, e.Type, e.Err)
}

func (e *PropertyError) Unwrap() error { return e.Err }
