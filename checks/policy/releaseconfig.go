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

const schemaHint = "see operator-pipelines' release-config.yaml schema (operatorcert/schemas/release-config-schema.json)"

// stringList checks a schema list of strings: at least one, each a string, none twice.
func stringList(v *yaml.Node, key string, add func(*yaml.Node, string, string, ...any)) {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		add(v, schemaHint, "%s must list at least one string", key)
		return
	}
	seen := map[string]bool{}
	for _, item := range v.Content {
		switch {
		case !isString(item):
			add(item, schemaHint, "%s: each entry must be a string", key)
		case seen[item.Value]:
			add(item, schemaHint, "%s: %q is listed twice", key, item.Value)
		}
		seen[item.Value] = true
	}
}

// nodeText is a node's content as YAML, to tell equal entries apart from different ones.
func nodeText(n *yaml.Node) string {
	out, err := yaml.Marshal(n)
	if err != nil {
		return fmt.Sprint(n.Line)
	}
	return string(out)
}

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
	if !fbcEnabled(ci) {
		add(nil, "set fbc.enabled: true in the package's ci.yaml, or remove release-config.yaml",
			"%s is used but the package's ci.yaml does not enable fbc: nothing would release the bundle", file)
		return ds
	}
	var list *yaml.Node
	if len(doc.Content) > 0 && doc.Content[0].Kind == yaml.MappingNode {
		for k, v := range pairs(doc.Content[0]) {
			switch k.Value {
			case "catalog_templates":
				list = v
			case "merge":
				if v.Tag != "!!bool" {
					add(v, schemaHint, "merge must be true or false")
				}
			default:
				add(k, schemaHint, "%q is not a key of release-config.yaml (merge, catalog_templates)", k.Value)
			}
		}
	} else if len(doc.Content) > 0 {
		add(doc.Content[0], schemaHint, "release-config.yaml must be a mapping")
		return ds
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		add(list, "list the templates the bundle is released into: catalog_templates: [{template_name, channels, replaces}]", "%s has no catalog_templates list", file)
		return ds
	}
	seen := map[string]int{}
	for _, entry := range list.Content {
		if prev, dup := seen[nodeText(entry)]; dup {
			add(entry, schemaHint, "this catalog_templates entry repeats the one on line %d", prev)
		}
		seen[nodeText(entry)] = entry.Line
		var name, channels *yaml.Node
		if entry.Kind != yaml.MappingNode {
			add(entry, schemaHint, "a catalog_templates entry must be a mapping")
			continue
		}
		for k, v := range pairs(entry) {
			switch k.Value {
			case "template_name":
				name = v
			case "channels":
				channels = v
				stringList(v, "channels", add)
			case "skips":
				stringList(v, "skips", add)
			case "defaultChannel", "replaces", "skipRange":
				if !isString(v) {
					add(v, schemaHint, "%s must be a string", k.Value)
				}
			}
		}
		if name == nil || !isString(name) {
			add(entry, schemaHint, "a catalog_templates entry needs a template_name (a string)")
			continue
		}
		typ, mapped := types[name.Value]
		if !mapped {
			add(name, "add the template to fbc.catalog_mapping in the package's ci.yaml, or release into a mapped one",
				"template %q is not mapped in the package's ci.yaml (fbc.catalog_mapping): the bundle would be released into no catalog", name.Value)
		}
		if channels == nil {
			add(entry, schemaHint, "template %q: channels must list at least one channel", name.Value)
			continue
		}
		if channels.Kind != yaml.SequenceNode {
			continue // stringList reported it
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
