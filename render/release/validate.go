package release

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/checks/policy"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
)

// Check names the release's diagnostics.
const Check = "release"

// Validate lists what refuses the release, each with its file and line: policy-release-config's rules (a
// template not mapped in ci.yaml, a semver template's channel that is not an archetype), a template that
// does not exist, a replaces target that no channel of a basic template has, and a bundle already in the
// template (its channel entry or its image).
func (r *Release) Validate() []diag.Diagnostic {
	ds := policy.CheckReleaseConfig(r.ConfigFile, r.configData, r.ciData, policy.Severities{"policy-release-config": diag.Error})
	add := func(file string, line int, hint, format string, args ...any) {
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, File: file, Line: line, Package: r.Package,
			Bundle: r.Bundle.Name, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	for _, t := range r.Targets {
		m := r.mapping(t.Template)
		if m == nil {
			continue // policy-release-config said so
		}
		file := r.templateFile(t.Template)
		data, err := readFile(r.Root, file, template.MaxTemplateSize)
		if errors.Is(err, fs.ErrNotExist) {
			// created with the bundle alone (Apply), so nothing can be replaced
			if t.Replaces != "" {
				add(r.ConfigFile, t.ReplacesLine, "a new template has no bundle to replace: drop replaces",
					"template %s does not exist yet, so no channel has %q, the bundle %s replaces", file, t.Replaces, r.Bundle.Name)
			}
			continue
		}
		if err != nil {
			add(r.ConfigFile, t.Line, "", "reading %s: %v", file, err)
			continue
		}
		_, root, err := parse(data)
		if err != nil {
			add(file, 1, "", "%s is not a template: %v", file, err)
			continue
		}
		switch m.Type {
		case template.SchemaBasic:
			r.validateBasic(root, t, file, add)
		case template.SchemaSemver:
			for _, ch := range t.Channels {
				for _, img := range semverImages(root, ch) {
					if img.Value == r.Bundle.Image {
						add(file, img.Line, "the bundle is released already; a new version needs a new bundle directory",
							"%s already holds %s in %s (released by %s:%d)", file, r.Bundle.Image, ch, r.ConfigFile, t.Line)
					}
				}
			}
		default:
			add(r.ConfigFile, t.Line, "", "template %s is a %s template, which a release cannot add to (basic and semver can)", file, m.Type)
		}
	}
	return diag.Sort(ds)
}

// validateBasic checks a basic template's replaces target, and that no channel the release names has the
// bundle already (its image in the template is no refusal: a bundle released into another channel keeps
// its one olm.bundle).
func (r *Release) validateBasic(root *yaml.Node, t Target, file string, add func(string, int, string, string, ...any)) {
	_, entries := field(root, "entries")
	names := map[string]bool{}
	if entries != nil {
		for _, e := range entries.Content {
			_, schema := field(e, "schema")
			_, list := field(e, "entries")
			if schema == nil || schema.Value != "olm.channel" || list == nil {
				continue
			}
			_, ch := field(e, "name")
			named := ch != nil && slices.Contains(t.Channels, ch.Value)
			for _, ce := range list.Content {
				_, name := field(ce, "name")
				if name == nil {
					continue
				}
				names[name.Value] = true
				if named && name.Value == r.Bundle.Name {
					add(file, name.Line, "the bundle is released already; a new version needs a new bundle directory",
						"%s: channel %s already has an entry for %s (released by %s:%d)", file, ch.Value, r.Bundle.Name, r.ConfigFile, t.Line)
				}
			}
		}
	}
	if t.Replaces != "" && !names[t.Replaces] {
		add(r.ConfigFile, t.ReplacesLine, "replaces must name a bundle the template's channels have",
			"template %s: no channel has %q, the bundle %s replaces", file, t.Replaces, r.Bundle.Name)
	}
}

// semverImages are the Image values of channel ch's Bundles list of a semver template.
func semverImages(root *yaml.Node, ch string) []*yaml.Node {
	var out []*yaml.Node
	_, c := field(root, ch)
	_, list := field(c, "Bundles")
	if list == nil {
		return nil
	}
	for _, b := range list.Content {
		if _, img := field(b, "Image"); img != nil {
			out = append(out, img)
		}
	}
	return out
}
