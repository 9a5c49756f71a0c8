package release

import (
	"fmt"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
)

// ConfigFile is the release configuration's name in a bundle directory.
const ConfigFile = "release-config.yaml"

// maxConfigSize bounds a release-config.yaml.
const maxConfigSize = 1 << 20

// Target is one catalog_templates entry of a release-config.yaml.
type Target struct {
	Template string
	Channels []string
	Replaces string
	Skips    []string
	// SkipRange is kept as written; empty when absent.
	SkipRange string
	// Line is the entry's template_name line; ChannelLines and ReplacesLine those of its values.
	Line         int
	ChannelLines []int
	ReplacesLine int
}

// ParseConfig reads a release-config.yaml (file names it in errors). Shape errors are refused with their
// line; rules that need the package (mapped templates, channels) are Validate's.
func ParseConfig(file string, data []byte) ([]Target, error) {
	if len(data) > maxConfigSize {
		return nil, diag.InvalidError(fmt.Errorf("%s: larger than %d bytes", file, maxConfigSize))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, diag.InvalidError(fmt.Errorf("%s: %w", file, err))
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, diag.InvalidError(fmt.Errorf("%s:1: not a mapping with catalog_templates", file))
	}
	_, list := field(doc.Content[0], "catalog_templates")
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		return nil, diag.InvalidError(fmt.Errorf("%s:1: no catalog_templates list", file))
	}
	var out []Target
	for _, e := range list.Content {
		if e.Kind != yaml.MappingNode {
			return nil, diag.InvalidError(fmt.Errorf("%s:%d: a catalog_templates entry must be a mapping", file, e.Line))
		}
		t := Target{Line: e.Line}
		for i := 0; i+1 < len(e.Content); i += 2 {
			k, v := e.Content[i], e.Content[i+1]
			switch k.Value {
			case "template_name":
				t.Template, t.Line = v.Value, v.Line
			case "replaces":
				t.Replaces, t.ReplacesLine = v.Value, v.Line
			case "skipRange":
				t.SkipRange = v.Value
			case "channels", "skips":
				if v.Kind != yaml.SequenceNode {
					return nil, diag.InvalidError(fmt.Errorf("%s:%d: %s must be a list", file, v.Line, k.Value))
				}
				for _, c := range v.Content {
					if c.Kind != yaml.ScalarNode || c.Value == "" {
						return nil, diag.InvalidError(fmt.Errorf("%s:%d: %s must list names", file, c.Line, k.Value))
					}
					if k.Value == "skips" {
						t.Skips = append(t.Skips, c.Value)
					} else {
						t.Channels, t.ChannelLines = append(t.Channels, c.Value), append(t.ChannelLines, c.Line)
					}
				}
			default:
				return nil, diag.InvalidError(fmt.Errorf("%s:%d: unknown field %q (template_name, channels, replaces, skips, skipRange)", file, k.Line, k.Value))
			}
			if v.Kind == yaml.ScalarNode && k.Value != "channels" && k.Value != "skips" && v.ShortTag() != "!!str" {
				return nil, diag.InvalidError(fmt.Errorf("%s:%d: %s must be a string", file, v.Line, k.Value))
			}
			for _, n := range append([]*yaml.Node{v}, v.Content...) {
				if n.Kind == yaml.ScalarNode && strings.ContainsFunc(n.Value, unicode.IsControl) {
					return nil, diag.InvalidError(fmt.Errorf("%s:%d: %s: a name has no line breaks or control characters", file, n.Line, k.Value))
				}
			}
		}
		if t.Template == "" {
			return nil, diag.InvalidError(fmt.Errorf("%s:%d: a catalog_templates entry needs a template_name", file, e.Line))
		}
		out = append(out, t)
	}
	return out, nil
}

// field is the key and value nodes of key in mapping m (nil when absent).
func field(m *yaml.Node, key string) (k, v *yaml.Node) { return template.Field(m, key) }
