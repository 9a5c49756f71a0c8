package policy

import (
	"fmt"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// ruleCISchema: an operator's ci.yaml against the schema operator-pipelines holds it to
// (check_schema_operator_ci_config): the keys it knows have their types and values; other top-level keys
// are left alone, as its schema does; fbc takes only the keys it defines.
const ruleCISchema = "policy-ci-schema"

// maxCIBytes bounds a ci.yaml (a hostile one is refused, not parsed).
const maxCIBytes = 1 << 20

var (
	updateGraphs      = []string{"replaces-mode", "semver-mode"}
	templateTypes     = []string{"olm.template.basic", "olm.semver"}
	promotionStrategy = []string{"never", "always", "review-needed"}
)

// CheckCI checks one ci.yaml (file names it, repository-relative) when sev enables policy-ci-schema.
func CheckCI(file string, data []byte, sev Severities) []diag.Diagnostic {
	s := sev[ruleCISchema]
	if s == "" {
		return nil
	}
	var ds []diag.Diagnostic
	add := func(n *yaml.Node, format string, args ...any) {
		line, col := 1, 0
		if n != nil {
			line, col = n.Line, n.Column
		}
		ds = append(ds, diag.Diagnostic{Severity: s, Check: Check, Rule: ruleCISchema, File: file, Line: line, Column: col,
			Message: fmt.Sprintf(format, args...), Hint: "see operator-pipelines' ci.yaml documentation (docs/users/operator-ci-yaml.md)"})
	}
	if len(data) > maxCIBytes {
		add(nil, "%s is larger than %d bytes", file, maxCIBytes)
		return ds
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		add(nil, "%s is not YAML: %v", file, err)
		return ds
	}
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		add(root, "ci.yaml must be a mapping")
		return ds
	}
	for k, v := range pairs(root) {
		switch k.Value {
		case "updateGraph":
			oneOf(v, "updateGraph", updateGraphs, add)
		case "reviewers":
			if !nonEmptyList(v, "reviewers must be a list of at least one GitHub login", add) {
				continue
			}
			for _, r := range v.Content {
				if !isString(r) || r.Value == "" {
					add(r, "a reviewer must be a GitHub login (a string)")
				}
			}
		case "merge", "addReviewers":
			if !isBool(v) {
				add(v, "%s must be true or false", k.Value)
			}
		case "cert_project_id":
			if !isString(v) {
				add(v, "cert_project_id must be a string")
			}
		case "fbc":
			checkFBC(v, add)
		}
	}
	return ds
}

func checkFBC(fbc *yaml.Node, add func(*yaml.Node, string, ...any)) {
	if fbc.Kind != yaml.MappingNode {
		add(fbc, "fbc must be a mapping")
		return
	}
	for k, v := range pairs(fbc) {
		switch k.Value {
		case "enabled":
			if !isBool(v) {
				add(v, "fbc.enabled must be true or false")
			}
		case "version_promotion_strategy":
			oneOf(v, "fbc.version_promotion_strategy", promotionStrategy, add)
		case "catalog_mapping":
			if v.Kind != yaml.SequenceNode {
				add(v, "fbc.catalog_mapping must be a list")
				continue
			}
			for _, m := range v.Content {
				checkMapping(m, add)
			}
		default:
			add(k, "fbc has no key %q (enabled, catalog_mapping, version_promotion_strategy)", k.Value)
		}
	}
}

func checkMapping(m *yaml.Node, add func(*yaml.Node, string, ...any)) {
	if m.Kind != yaml.MappingNode {
		add(m, "a catalog_mapping entry must be a mapping")
		return
	}
	seen := map[string]bool{}
	for k, v := range pairs(m) {
		seen[k.Value] = true
		switch k.Value {
		case "template_name":
			if !isString(v) || v.Value == "" {
				add(v, "template_name must be a file name")
			}
		case "type":
			oneOf(v, "type", templateTypes, add)
		case "catalog_names":
			if !nonEmptyList(v, "catalog_names must be a list of at least one catalog", add) {
				continue
			}
			names := map[string]bool{}
			for _, n := range v.Content {
				switch {
				case !isString(n) || n.Value == "":
					add(n, "a catalog name must be a string")
				case names[n.Value]:
					add(n, "catalog %q is listed twice", n.Value)
				}
				names[n.Value] = true
			}
		}
	}
	for _, req := range []string{"template_name", "type", "catalog_names"} {
		if !seen[req] {
			add(m, "a catalog_mapping entry needs %s", req)
		}
	}
}

// oneOf reports v unless it is a scalar among allowed.
func oneOf(v *yaml.Node, field string, allowed []string, add func(*yaml.Node, string, ...any)) {
	if v.Kind != yaml.ScalarNode || !slices.Contains(allowed, v.Value) {
		add(v, "%s must be one of %v", field, allowed)
	}
}

// nonEmptyList reports v with why unless it is a list of at least one item; false when it is not.
func nonEmptyList(v *yaml.Node, why string, add func(*yaml.Node, string, ...any)) bool {
	if v.Kind != yaml.SequenceNode || len(v.Content) == 0 {
		add(v, "%s", why)
		return false
	}
	return true
}

// pairs yields a mapping's keys and values, aliases resolved.
func pairs(m *yaml.Node) func(func(k, v *yaml.Node) bool) {
	return func(yield func(k, v *yaml.Node) bool) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			v := m.Content[i+1]
			if v.Kind == yaml.AliasNode && v.Alias != nil {
				v = v.Alias
			}
			if !yield(m.Content[i], v) {
				return
			}
		}
	}
}

func isString(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!str" }
func isBool(n *yaml.Node) bool   { return n.Kind == yaml.ScalarNode && n.Tag == "!!bool" }
