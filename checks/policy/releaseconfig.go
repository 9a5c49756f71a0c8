package policy

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// ruleReleaseConfig: a bundle's release-config.yaml (operators/<package>/<version>/release-config.yaml,
// the auto-release of the FBC workflow) against operator-pipelines' check_bundle_release_config: each
// template it names is mapped in the package's ci.yaml, and a semver template's channels are its
// archetypes.
const ruleReleaseConfig = "policy-release-config"

// semverArchetypes are the channels an olm.semver template has.
var semverArchetypes = []string{"Candidate", "Fast", "Stable"}

// CheckReleaseConfig checks release-config.yaml file (data) against its package's ci.yaml (ci, nil when
// the package has none) when sev enables policy-release-config.
func CheckReleaseConfig(file string, data, ci []byte, sev Severities) []diag.Diagnostic {
	s := sev[ruleReleaseConfig]
	if s == "" {
		return nil
	}
	var ds []diag.Diagnostic
	add := func(n *yaml.Node, hint, format string, args ...any) {
		line, col := 1, 0
		if n != nil {
			line, col = n.Line, n.Column
		}
		ds = append(ds, diag.Diagnostic{Severity: s, Check: Check, Rule: ruleReleaseConfig, File: file, Line: line, Column: col,
			Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	if len(data) > maxCIBytes {
		add(nil, "", "%s is larger than %d bytes", file, maxCIBytes)
		return ds
	}
	types := mappedTemplates(ci)
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		add(nil, "", "%s is not YAML: %v", file, err)
		return ds
	}
	var list *yaml.Node
	if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
		for k, v := range pairs(doc.Content[0]) {
			if k.Value == "catalog_templates" {
				list = v
			}
		}
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		add(nil, "list the templates the bundle is released into: catalog_templates: [{template_name, channels, replaces}]", "%s has no catalog_templates list", file)
		return ds
	}
	for _, entry := range list.Content {
		var name, channels *yaml.Node
		if entry.Kind == yaml.MappingNode {
			for k, v := range pairs(entry) {
				switch k.Value {
				case "template_name":
					name = v
				case "channels":
					channels = v
				}
			}
		}
		if name == nil || !isString(name) || name.Value == "" {
			add(entry, "", "a catalog_templates entry needs a template_name")
			continue
		}
		typ, mapped := types[name.Value]
		if !mapped {
			add(name, "add the template to fbc.catalog_mapping in the package's ci.yaml, or release into a mapped one",
				"template %q is not mapped in the package's ci.yaml (fbc.catalog_mapping): the bundle would be released into no catalog", name.Value)
		}
		if channels == nil || channels.Kind != yaml.SequenceNode || len(channels.Content) == 0 {
			add(entry, "", "template %q: channels must list at least one channel", name.Value)
			continue
		}
		for _, c := range channels.Content {
			if typ == "olm.semver" && !slices.Contains(semverArchetypes, c.Value) {
				add(c, "an olm.semver template has the channels Candidate, Fast and Stable",
					"template %q is an olm.semver template: channel %q is not one of %v", name.Value, c.Value, semverArchetypes)
			}
		}
	}
	return ds
}

// mappedTemplates maps each template_name of a ci.yaml's fbc.catalog_mapping to its type.
func mappedTemplates(ci []byte) map[string]string {
	out := map[string]string{}
	var doc yaml.Node
	if len(ci) > maxCIBytes || yaml.Unmarshal(ci, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return out
	}
	for k, fbc := range pairs(doc.Content[0]) {
		if k.Value != "fbc" || fbc.Kind != yaml.MappingNode {
			continue
		}
		for k, list := range pairs(fbc) {
			if k.Value != "catalog_mapping" || list.Kind != yaml.SequenceNode {
				continue
			}
			for _, m := range list.Content {
				var name, typ string
				if m.Kind == yaml.MappingNode {
					for k, v := range pairs(m) {
						switch k.Value {
						case "template_name":
							name = v.Value
						case "type":
							typ = v.Value
						}
					}
				}
				if name != "" {
					out[name] = typ
				}
			}
		}
	}
	return out
}
