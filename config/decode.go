package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// ParseConfig strictly decodes a .catalogbot.yaml (file names it in diagnostics) over Default. Every
// problem is reported, each with its line: unknown fields, wrong types, duplicate keys, bad values. When
// any is an error the Config is nil and err (category usage) summarizes them; warnings alone leave a
// usable Config.
func ParseConfig(file string, data []byte) (*Config, []diag.Diagnostic, error) {
	d := &decoder{file: file, pos: map[string]position{}, failed: map[string]bool{}, nulls: map[string]bool{}}
	cfg := Default()
	root, problem := parseYAML(data)
	switch {
	case problem != nil:
		d.add(diag.Error, problem.line, 0, "config-"+problem.rule, "", problem.msg)
	case root == nil:
		d.add(diag.Error, 1, 0, "config-missing-field", fmt.Sprintf("start the file with apiVersion: %s and kind: %s", APIVersion, Kind), "the configuration is empty")
	default:
		d.decode(root, reflect.ValueOf(cfg).Elem(), "")
		d.validate(cfg)
	}
	ds := diag.Sort(d.diags)
	if d.dropped > 0 {
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: "config", Rule: "config-too-many-errors", File: file,
			Message: fmt.Sprintf("%d more problems not shown", d.dropped)})
	}
	if !diag.HasErrors(ds) {
		return cfg, ds, nil
	}
	n := d.dropped
	for _, x := range d.diags {
		if x.Severity == diag.Error {
			n++
		}
	}
	return nil, ds, diag.UsageError(&InvalidError{File: file, Errors: n, Diagnostics: ds})
}

// InvalidError is a configuration that does not validate. Its message is one line (for check runs and
// logs); Detail lists every diagnostic with its hint, for a terminal.
type InvalidError struct {
	File        string
	Errors      int
	Diagnostics []diag.Diagnostic
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s: invalid configuration (%d errors; first: %s)", e.File, e.Errors, e.Diagnostics[0])
}

// Detail is every diagnostic, one a line, each followed by its hint.
func (e *InvalidError) Detail() string {
	var b strings.Builder
	for _, d := range e.Diagnostics {
		fmt.Fprintf(&b, "  %s\n", d)
		if d.Hint != "" {
			fmt.Fprintf(&b, "    hint: %s\n", d.Hint)
		}
	}
	return b.String()
}

type position struct{ line, col int }

// decoder walks a yaml.Node tree into a struct by its yaml tags, recording each value's position by path
// ("catalog.dir", "maintainers[1]", "owners.etcd[0]") for the validation that follows.
type decoder struct {
	file    string
	pos     map[string]position
	failed  map[string]bool // list items with the wrong type, already reported
	nulls   map[string]bool // values written as null: they keep their defaults
	diags   []diag.Diagnostic
	dropped int
}

func (d *decoder) add(sev diag.Severity, line, col int, rule, hint, msg string) {
	if len(d.diags) >= maxDiags {
		d.dropped++
		return
	}
	d.diags = append(d.diags, diag.Diagnostic{Severity: sev, Check: "config", Rule: rule, File: d.file,
		Line: line, Column: col, Message: msg, Hint: hint})
}

// at is where path's value is; the document's start when it is not in the file.
func (d *decoder) at(path string) position {
	if p, ok := d.pos[path]; ok {
		return p
	}
	return d.pos[""]
}

func (d *decoder) errorAt(path, rule, hint, format string, args ...any) {
	p := d.at(path)
	d.add(diag.Error, p.line, p.col, rule, hint, fmt.Sprintf(format, args...))
}

func (d *decoder) warnAt(path, rule, hint, format string, args ...any) {
	p := d.at(path)
	d.add(diag.Warning, p.line, p.col, rule, hint, fmt.Sprintf(format, args...))
}

func label(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// decode stores n into v; null keeps v's default. It reports whether n had the right type.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) bool {
	n = resolve(n)
	d.pos[path] = position{n.Line, n.Column}
	if isNull(n) {
		d.nulls[path] = true
		return true
	}
	switch v.Kind() {
	case reflect.Struct:
		return d.structure(n, v, path)
	case reflect.Map:
		return d.mapping(n, v, path)
	case reflect.Slice:
		return d.list(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.wrongType(n, path, "a string")
			return false
		}
		v.SetString(n.Value)
	case reflect.Bool:
		var b bool
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
			d.wrongType(n, path, "true or false")
			return false
		}
		v.SetBool(b)
	case reflect.Int:
		var i int
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
			d.wrongType(n, path, "an integer")
			return false
		}
		v.SetInt(int64(i))
	default:
		panic(fmt.Sprintf("owners: config field %s has unsupported Go kind %s", path, v.Kind()))
	}
	return true
}

func (d *decoder) wrongType(n *yaml.Node, path, want string) {
	got := kindName(n)
	if n.Kind == yaml.ScalarNode && got == "a string" {
		got = fmt.Sprintf("the string %q", n.Value)
	}
	d.add(diag.Error, n.Line, n.Column, "config-wrong-type", "", fmt.Sprintf("%s must be %s, not %s", label(path), want, got))
}

// pairs calls fn for each key/value of mapping n, reporting non-string keys, merge keys and duplicates.
func (d *decoder) pairs(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		switch {
		case k.Kind != yaml.ScalarNode:
			d.add(diag.Error, k.Line, k.Column, "config-wrong-type", "", fmt.Sprintf("keys in %s must be strings, not %s", label(path), kindName(k)))
			continue
		case k.Tag == "!!merge":
			d.add(diag.Error, k.Line, k.Column, "config-unsupported", "write the keys out instead of merging them with <<", fmt.Sprintf("YAML merge keys (<<) are not supported in %s", label(path)))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.add(diag.Error, k.Line, k.Column, "config-duplicate-key", "remove one of them",
				fmt.Sprintf("duplicate key %q in %s (first at line %d)", k.Value, label(path), first))
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, n.Content[i+1])
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.MappingNode {
		d.wrongType(n, path, "a mapping")
		return false
	}
	fields := map[string]int{}
	var names []string
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		fields[name] = i
		names = append(names, name)
	}
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		i, ok := fields[key]
		if !ok {
			hint := "known fields: " + strings.Join(names, ", ")
			if s := closest(key, names); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			d.add(diag.Error, k.Line, k.Column, "config-unknown-field", hint, fmt.Sprintf("unknown field %q in %s", key, label(path)))
			return
		}
		d.decode(val, v.Field(i), join(path, key))
	})
	return true
}

// mapping decodes a map[string][]string (owners).
func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.MappingNode {
		d.wrongType(n, path, "a mapping of package names to lists")
		return false
	}
	m := reflect.MakeMap(v.Type())
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		p := join(path, key)
		d.pos[p+"#key"] = position{k.Line, k.Column}
		e := reflect.New(v.Type().Elem()).Elem()
		if !d.decode(val, e, p) {
			d.failed[p] = true // reported; validation skips it
		}
		m.SetMapIndex(reflect.ValueOf(key), e)
	})
	v.Set(m)
	return true
}

// list decodes a []string.
func (d *decoder) list(n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.SequenceNode {
		d.wrongType(n, path, "a list")
		return false
	}
	s := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		e := reflect.New(v.Type().Elem()).Elem()
		p := fmt.Sprintf("%s[%d]", path, i)
		if !d.decode(item, e, p) {
			d.failed[p] = true // kept as a zero value so indexes match the file; validation skips it
		}
		s = reflect.Append(s, e)
	}
	v.Set(s)
	return true
}

// closest is the name within edit distance 2 of s (case-insensitive), or "".
func closest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if dist := editDistance(strings.ToLower(s), strings.ToLower(n)); dist < bestD {
			best, bestD = n, dist
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = slices.Min([]int{prev[j] + 1, cur[j-1] + 1, prev[j-1] + cost})
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
