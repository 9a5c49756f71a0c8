package template

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// Write prints a rendered template as `opm alpha render-template -o json|yaml` does: by package in name
// order (its package blobs, channels and bundles by name, other schemas by schema, deprecations), then
// other-schema blobs of no package; blobs of other schemas that name no package are dropped. Unlike
// catalog.WriteJSON, property values are written as they are: a template's bundles come from images, not
// from files read through Go maps, so opm keeps their field order.
func Write(w io.Writer, c *catalog.Catalog, format string) error {
	var enc func(v any) error
	switch format {
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "    ")
		e.SetEscapeHTML(false)
		enc = e.Encode
	case "yaml":
		enc = yamlEncoder(w)
	default:
		return fmt.Errorf("invalid output format %q, expected json or yaml", format)
	}
	type group struct {
		pkgs   []*catalog.Package
		chans  []*catalog.Channel
		bundls []*catalog.Bundle
		others []*catalog.Meta
		deps   []*catalog.Deprecation
	}
	groups := map[string]*group{}
	get := func(name string) *group {
		g := groups[name]
		if g == nil {
			g = &group{}
			groups[name] = g
		}
		return g
	}
	var rootOthers []*catalog.Meta
	for _, p := range c.Packages {
		if p.Name != "" {
			get(p.Name).pkgs = append(get(p.Name).pkgs, p)
		}
	}
	for _, ch := range c.Channels {
		if ch.Package != "" {
			get(ch.Package).chans = append(get(ch.Package).chans, ch)
		}
	}
	for _, b := range c.Bundles {
		if b.Package != "" {
			get(b.Package).bundls = append(get(b.Package).bundls, b)
		}
	}
	for _, o := range c.Others {
		if o.Package == "" {
			rootOthers = append(rootOthers, o)
		} else {
			get(o.Package).others = append(get(o.Package).others, o)
		}
	}
	for _, d := range c.Deprecations {
		if d.Package != "" {
			get(d.Package).deps = append(get(d.Package).deps, d)
		}
	}
	names := make([]string, 0, len(groups))
	for n := range groups {
		names = append(names, n)
	}
	sort.Strings(names)
	var blobs []any
	for _, n := range names {
		g := groups[n]
		sort.SliceStable(g.chans, func(i, j int) bool { return g.chans[i].Name < g.chans[j].Name })
		sort.SliceStable(g.bundls, func(i, j int) bool { return g.bundls[i].Name < g.bundls[j].Name })
		sort.SliceStable(g.others, func(i, j int) bool { return g.others[i].Schema < g.others[j].Schema })
		for _, p := range g.pkgs {
			blobs = append(blobs, p)
		}
		for _, ch := range g.chans {
			blobs = append(blobs, ch)
		}
		for _, b := range g.bundls {
			blobs = append(blobs, b)
		}
		for _, o := range g.others {
			blobs = append(blobs, o.Blob)
		}
		for _, d := range g.deps {
			blobs = append(blobs, d)
		}
	}
	for _, o := range rootOthers {
		blobs = append(blobs, o.Blob)
	}
	for _, b := range blobs {
		if err := enc(b); err != nil {
			return fmt.Errorf("writing rendered template: %w", err)
		}
	}
	return nil
}

// yamlEncoder writes each blob as "---\n" and the YAML of its JSON (HTML characters unescaped), as opm.
func yamlEncoder(w io.Writer) func(v any) error {
	return func(v any) error {
		var buf bytes.Buffer
		e := json.NewEncoder(&buf)
		e.SetEscapeHTML(false)
		if err := e.Encode(v); err != nil {
			return err
		}
		doc, err := yaml.JSONToYAML(buf.Bytes())
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, "---\n"); err != nil {
			return err
		}
		_, err = w.Write(doc)
		return err
	}
}
