// Package render turns a references config (catalog.yaml: name, repo, tag, references[{name, image}])
// into a file-based catalog, deterministically: index images are read without a daemon, bundle images and
// directories are rendered as opm render does.
package render

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// Check is the name of the render stage in diagnostics.
const Check = "render"

// Config is a references config, as in OLM's docs (the input of `opm render` per reference).
type Config struct {
	// File is where it was read from (for diagnostics).
	File       string
	Name       string
	Repo       string
	Tag        string
	References []Reference
	// problems are the diagnostics ParseConfig found; Render refuses a config with errors.
	problems []diag.Diagnostic
}

// Reference is one catalog source: a catalog (index) image, a bundle image, or a bundle directory.
type Reference struct {
	Name  string
	Image string
	Line  int
}

// MaxConfigSize bounds a references config file.
const MaxConfigSize = 1 << 20

// ParseConfig decodes a references config strictly: unknown or duplicate keys, missing fields, duplicate
// reference names and malformed image references are all reported, each with its line.
func ParseConfig(data []byte, file string) (*Config, []diag.Diagnostic) {
	cfg := &Config{File: file}
	var ds []diag.Diagnostic
	bad := func(line int, rule, msg, hint string) {
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: rule, File: file, Line: line, Message: msg, Hint: hint})
	}
	if len(data) > MaxConfigSize {
		bad(0, "config-too-large", fmt.Sprintf("%s is %d bytes, more than the %d-byte limit", file, len(data), MaxConfigSize), "")
		return nil, ds
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		bad(yamlErrLine(err), "config-yaml", "invalid YAML: "+err.Error(), "")
		return nil, ds
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		bad(doc.Line, "config-yaml", "a references config must be a YAML mapping with name, repo, tag and references", "")
		return nil, ds
	}
	if budget := 100000; !countNodes(&doc, &budget) {
		bad(doc.Line, "config-yaml", "the document is too large or uses too many aliases", "")
		return nil, ds
	}
	root := doc.Content[0]
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if first, dup := seen[k.Value]; dup {
			bad(k.Line, "config-duplicate-key", fmt.Sprintf("key %q appears twice (first on line %d)", k.Value, first), "")
			continue
		}
		seen[k.Value] = k.Line
		switch k.Value {
		case "name", "repo", "tag":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" && v.Tag != "" {
				bad(v.Line, "config-wrong-type", fmt.Sprintf("%s must be a string", k.Value), "")
				continue
			}
			*map[string]*string{"name": &cfg.Name, "repo": &cfg.Repo, "tag": &cfg.Tag}[k.Value] = v.Value
		case "references":
			if v.Kind != yaml.SequenceNode {
				bad(v.Line, "config-wrong-type", "references must be a list of {name, image}", "")
				continue
			}
			ds = append(ds, parseReferences(cfg, v, file)...)
		default:
			bad(k.Line, "config-unknown-field", fmt.Sprintf("unknown key %q; a references config has name, repo, tag and references", k.Value), "")
		}
	}
	if cfg.Name == "" {
		bad(root.Line, "config-missing-name", "name is missing: it names the output directory of the rendered catalog", "")
	} else if strings.ContainsAny(cfg.Name, `/\`) || cfg.Name == "." || cfg.Name == ".." {
		bad(seen["name"], "config-bad-name", fmt.Sprintf("name %q must be a single directory name", cfg.Name), "")
	}
	if cfg.Repo != "" {
		ref := cfg.Repo
		if cfg.Tag != "" {
			ref += ":" + cfg.Tag
		}
		if _, err := name.ParseReference(ref, name.StrictValidation); err != nil {
			bad(seen["repo"], "config-bad-repo", fmt.Sprintf("repo %q (with tag %q) is not a valid image repository: %v", cfg.Repo, cfg.Tag, err),
				"write it as registry.example.com/org/catalog, lower case, no tag (the tag goes in \"tag\")")
		}
	}
	ds = diag.Sort(ds)
	cfg.problems = ds
	return cfg, ds
}

// checkConfig returns what makes cfg unrenderable: the errors ParseConfig found, and for a Config built
// in code the same checks on its name and references.
func checkConfig(cfg *Config) []diag.Diagnostic {
	if cfg == nil {
		return []diag.Diagnostic{{Severity: diag.Error, Check: Check, Rule: "config-yaml", Message: "no references config"}}
	}
	if diag.HasErrors(cfg.problems) {
		return cfg.problems
	}
	var ds []diag.Diagnostic
	bad := func(line int, rule, msg string) {
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: rule, File: cfg.File, Line: line, Message: msg})
	}
	if cfg.Name == "" || strings.ContainsAny(cfg.Name, `/\`) || cfg.Name == "." || cfg.Name == ".." {
		bad(0, "config-bad-name", fmt.Sprintf("name %q must be a single directory name", cfg.Name))
	}
	seen := map[string]bool{}
	for _, r := range cfg.References {
		switch {
		case r.Name == "" || strings.ContainsAny(r.Name, `/\`) || r.Name == "." || r.Name == "..":
			bad(r.Line, "config-bad-reference-name", fmt.Sprintf("reference name %q must be a single directory name", r.Name))
		case seen[r.Name]:
			bad(r.Line, "config-duplicate-reference", fmt.Sprintf("reference %q appears twice", r.Name))
		case r.Image == "":
			bad(r.Line, "config-missing-image", fmt.Sprintf("reference %q has no image", r.Name))
		}
		seen[r.Name] = true
	}
	return diag.Sort(ds)
}

func parseReferences(cfg *Config, seq *yaml.Node, file string) []diag.Diagnostic {
	var ds []diag.Diagnostic
	bad := func(line int, rule, msg, hint string) {
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: rule, File: file, Line: line, Message: msg, Hint: hint})
	}
	names := map[string]int{}
	for i, item := range seq.Content {
		if item.Kind != yaml.MappingNode {
			bad(item.Line, "config-wrong-type", fmt.Sprintf("references[%d] must be a mapping with name and image", i), "")
			continue
		}
		ref := Reference{Line: item.Line}
		keys := map[string]bool{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], item.Content[j+1]
			if keys[k.Value] {
				bad(k.Line, "config-duplicate-key", fmt.Sprintf("references[%d] has key %q twice", i, k.Value), "")
				continue
			}
			keys[k.Value] = true
			switch k.Value {
			case "name", "image":
				if v.Kind != yaml.ScalarNode {
					bad(v.Line, "config-wrong-type", fmt.Sprintf("references[%d].%s must be a string", i, k.Value), "")
					continue
				}
				if k.Value == "name" {
					ref.Name = v.Value
				} else {
					ref.Image = v.Value
				}
			default:
				bad(k.Line, "config-unknown-field", fmt.Sprintf("references[%d] has unknown key %q; a reference has name and image", i, k.Value), "")
			}
		}
		switch {
		case ref.Name == "":
			bad(item.Line, "config-missing-reference-name", fmt.Sprintf("references[%d] has no name", i), "name it after its package")
			continue
		case strings.ContainsAny(ref.Name, `/\`) || ref.Name == "." || ref.Name == "..":
			bad(item.Line, "config-bad-reference-name", fmt.Sprintf("references[%d] name %q must be a single directory name", i, ref.Name), "")
			continue
		}
		if first, dup := names[ref.Name]; dup {
			bad(item.Line, "config-duplicate-reference", fmt.Sprintf("reference %q appears twice (first on line %d); both would render into %s/%s", ref.Name, first, cfg.Name, ref.Name),
				"remove one of them")
			continue
		}
		names[ref.Name] = item.Line
		if ref.Image == "" {
			bad(item.Line, "config-missing-image", fmt.Sprintf("reference %q has no image", ref.Name), "")
			continue
		}
		if !isLocalPath(ref.Image) {
			if _, err := name.ParseReference(ref.Image, name.StrictValidation); err != nil {
				bad(item.Line, "config-bad-image", fmt.Sprintf("reference %q: image %q is not a valid image reference: %v", ref.Name, ref.Image, err),
					"use registry/repository:tag or registry/repository@sha256:digest")
				continue
			}
		}
		cfg.References = append(cfg.References, ref)
	}
	return ds
}

// isLocalPath tells bundle directories (./dir, /abs/dir) from image references.
func isLocalPath(s string) bool {
	return strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "/")
}

// countNodes counts nodes with aliases expanded, giving up once budget is spent (YAML bombs expand
// exponentially, and cyclic aliases forever).
func countNodes(n *yaml.Node, budget *int) bool {
	*budget--
	if *budget < 0 {
		return false
	}
	for _, k := range n.Content {
		if !countNodes(k, budget) {
			return false
		}
	}
	if n.Alias != nil {
		return countNodes(n.Alias, budget)
	}
	return true
}

func yamlErrLine(err error) int {
	var line int
	if _, scanErr := fmt.Sscanf(strings.TrimPrefix(err.Error(), "yaml: "), "line %d:", &line); scanErr == nil {
		return line
	}
	return 0
}

// LocalDirs are the directories of the config's local references (bundle or catalog directories), as
// written, relative to the config's directory unless absolute.
func (c *Config) LocalDirs() []string {
	var out []string
	for _, r := range c.References {
		if isLocalPath(r.Image) {
			out = append(out, path.Clean(r.Image))
		}
	}
	return out
}
