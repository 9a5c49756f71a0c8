package bundleimage

import (
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// The bundle labels opm's generated bundle.Dockerfile names (operator-registry pkg/lib/bundle).
const (
	LabelMediatype      = "operators.operatorframework.io.bundle.mediatype.v1"
	LabelManifests      = "operators.operatorframework.io.bundle.manifests.v1"
	LabelMetadata       = "operators.operatorframework.io.bundle.metadata.v1"
	LabelPackage        = "operators.operatorframework.io.bundle.package.v1"
	LabelChannels       = "operators.operatorframework.io.bundle.channels.v1"
	LabelDefaultChannel = "operators.operatorframework.io.bundle.channel.default.v1"
	// MediatypeRegistryV1 is the one bundle format built (and the one opm renders).
	MediatypeRegistryV1 = "registry+v1"
)

// AnnotationsFile is the file whose annotations become the image's labels.
const AnnotationsFile = "metadata/annotations.yaml"

// labels reads the annotations map of annotations.yaml (data) as the image's labels: each scalar's text as
// written (`true` stays "true", `4.10` stays "4.10", null is ""). The core labels the image's layout
// depends on are checked (the manifests and metadata labels must name manifests/ and metadata/, the
// mediatype must be registry+v1, the package must be given) and added when left out.
func labels(data []byte) (map[string]string, error) {
	fail := func(line int, format string, args ...any) error {
		where := AnnotationsFile
		if line > 0 {
			where = fmt.Sprintf("%s:%d", AnnotationsFile, line)
		}
		return diag.InvalidError(fmt.Errorf("%s: %s", where, fmt.Sprintf(format, args...)))
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(strings.NewReader(string(data))).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fail(0, "empty: a bundle's annotations file holds an annotations map")
		}
		return nil, fail(0, "not YAML: %v", err)
	}
	root := deref(&doc)
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = deref(root.Content[0])
	}
	if root.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "not a map: a bundle's annotations file holds an annotations map")
	}
	var ann *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "annotations" {
			ann = deref(root.Content[i+1])
		}
	}
	if ann == nil || ann.Kind != yaml.MappingNode {
		return nil, fail(root.Line, "no annotations map")
	}
	out := map[string]string{}
	lines := map[string]int{}
	for i := 0; i+1 < len(ann.Content); i += 2 {
		k, v := deref(ann.Content[i]), deref(ann.Content[i+1])
		switch {
		case k.Kind != yaml.ScalarNode || k.Value == "" || k.Value == "<<":
			return nil, fail(k.Line, "annotation keys are non-empty strings (no merge keys)")
		case lines[k.Value] > 0:
			return nil, fail(k.Line, "annotation %s given twice (first on line %d)", k.Value, lines[k.Value])
		case v.Kind != yaml.ScalarNode:
			return nil, fail(v.Line, "annotation %s is not a string: an image label is one", k.Value)
		}
		lines[k.Value] = k.Line
		out[k.Value] = v.Value
		if v.Tag == "!!null" {
			out[k.Value] = ""
		}
	}
	core := []struct {
		label, want string
	}{{LabelMediatype, MediatypeRegistryV1}, {LabelManifests, "manifests/"}, {LabelMetadata, "metadata/"}}
	for _, c := range core {
		got, ok := out[c.label]
		switch {
		case !ok:
			out[c.label] = c.want
		case c.label == LabelMediatype && got != c.want:
			return nil, fail(lines[c.label], "%s is %q: only %s bundles are built (and rendered)", c.label, got, c.want)
		case c.label != LabelMediatype && path.Clean(got) != strings.TrimSuffix(c.want, "/"):
			return nil, fail(lines[c.label], "%s is %q: the image holds the bundle's %s at its root, as every bundle reader expects", c.label, got, c.want)
		}
	}
	if out[LabelPackage] == "" {
		return nil, fail(lines[LabelPackage], "annotation %s is missing or empty: a bundle image names its package", LabelPackage)
	}
	return out, nil
}

// deref is the node an alias stands for (one level: a scalar or a map, never expanded further).
func deref(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}
