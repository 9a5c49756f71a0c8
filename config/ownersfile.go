package config

import (
	"fmt"
	"path"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// ParseOwnersFile reads the owners a per-package file names: `approvers:` of an OWNERS file, `reviewers:`
// of a community catalog's ci.yaml (or any other name). Other keys are ignored. The file comes from the
// base revision, so the change's author cannot fix it: problems (bad YAML, a bad entry) are warnings, and
// bad entries are left out. Entries are logins or org/team, deduplicated case-insensitively.
func ParseOwnersFile(file string, data []byte) ([]string, []diag.Diagnostic) {
	key := "reviewers"
	if path.Base(file) == OWNERSFile {
		key = "approvers"
	}
	return parseOwnersList(file, data, key)
}

func parseOwnersList(file string, data []byte, key string) ([]string, []diag.Diagnostic) {
	var ds []diag.Diagnostic
	warn := func(line, col int, rule, msg string) {
		if len(ds) < maxDiags {
			ds = append(ds, diag.Diagnostic{Severity: diag.Warning, Check: "owners", Rule: rule, File: file, Line: line, Column: col,
				Message: msg, Hint: "owners listed in this file are not recognized until it is fixed (by a maintainer)"})
		}
	}
	root, problem := parseYAML(data)
	if problem != nil {
		warn(problem.line, 0, "owners-file-"+problem.rule, problem.msg)
		return nil, ds
	}
	if root == nil {
		return nil, nil
	}
	if root = resolve(root); isNull(root) {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		warn(root.Line, root.Column, "owners-file-wrong-type", fmt.Sprintf("the file must be a mapping, not %s", kindName(root)))
		return nil, ds
	}
	var list *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := resolve(root.Content[i])
		if k.Kind != yaml.ScalarNode || k.Value != key {
			continue
		}
		if list != nil {
			warn(k.Line, k.Column, "owners-file-duplicate-key", fmt.Sprintf("duplicate key %q: only the first is used", key))
			continue
		}
		list = resolve(root.Content[i+1])
	}
	if list == nil || isNull(list) {
		return nil, ds
	}
	if list.Kind != yaml.SequenceNode {
		warn(list.Line, list.Column, "owners-file-wrong-type", fmt.Sprintf("%s must be a list of logins, not %s", key, kindName(list)))
		return nil, ds
	}
	var out []string
	seen := map[string]bool{}
	for _, item := range list.Content {
		n := resolve(item)
		if n.Kind != yaml.ScalarNode || isNull(n) {
			warn(n.Line, n.Column, "owners-file-bad-entry", fmt.Sprintf("%s: entries must be logins, not %s", key, kindName(n)))
			continue
		}
		s := strings.TrimSpace(n.Value)
		if _, why, ok := ParsePrincipal(s); !ok {
			warn(n.Line, n.Column, "owners-file-bad-entry", fmt.Sprintf("%s: %q is neither a GitHub login nor org/team: %s", key, s, why))
			continue
		}
		if k := strings.ToLower(s); !seen[k] {
			seen[k] = true
			out = append(out, s)
		}
	}
	return out, ds
}
