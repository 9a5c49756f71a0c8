package validate

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
)

// Differential tests on mutated copies of real packages: each mutation is applied to a YAML package
// (community-operators-prod-v4.20) and/or a JSON one (composed-279), and opm and catalogbot must agree.
// Every mutation also states the verdict it is meant to produce, so a mutation that silently stops
// mutating anything (or no longer breaks what it should) is caught.

type blob = map[string]any

// mutant is one temporary catalog: the package under test plus an untouched bystander package.
type mutant struct {
	t    *testing.T
	root string // catalog root
	pkg  string // package under test
	file string // its catalog file
	yaml bool
}

func (m *mutant) text() string {
	m.t.Helper()
	data, err := os.ReadFile(m.file)
	if err != nil {
		m.t.Fatal(err)
	}
	return string(data)
}

func (m *mutant) setText(s string) {
	m.t.Helper()
	if err := os.WriteFile(m.file, []byte(s), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

// replace replaces the first n (n < 0: all) occurrences of old in the package file; old must occur.
func (m *mutant) replace(old, new string, n int) {
	m.t.Helper()
	s := m.text()
	if !strings.Contains(s, old) {
		m.t.Fatalf("mutation target %q not found in %s", old, m.file)
	}
	m.setText(strings.Replace(s, old, new, n))
}

// write creates a file relative to the catalog root.
func (m *mutant) write(rel, content string) {
	m.t.Helper()
	p := filepath.Join(m.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		m.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		m.t.Fatal(err)
	}
}

func (m *mutant) symlink(target, rel string) {
	m.t.Helper()
	if err := os.Symlink(target, filepath.Join(m.root, filepath.FromSlash(rel))); err != nil {
		m.t.Fatal(err)
	}
}

// blobs parses the package file into generic blobs (numbers kept as json.Number).
func (m *mutant) blobs() []blob {
	m.t.Helper()
	blobs, err := parseBlobs([]byte(m.text()), m.yaml)
	if err != nil {
		m.t.Fatalf("parse %s: %v", m.file, err)
	}
	return blobs
}

// edit rewrites the package file in its own format after fn changed its blobs.
func (m *mutant) edit(fn func(bs []blob) []blob) {
	m.t.Helper()
	m.setText(encodeBlobs(m.t, fn(m.blobs()), m.yaml))
}

func parseBlobs(data []byte, isYAML bool) ([]blob, error) {
	var docs [][]byte
	if isYAML {
		for _, doc := range strings.Split("\n"+string(data), "\n---\n") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				return nil, err
			}
			docs = append(docs, js)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, err
			}
			docs = append(docs, raw)
		}
	}
	var out []blob
	for _, d := range docs {
		var b blob
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.UseNumber()
		if err := dec.Decode(&b); err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

func encodeBlobs(t *testing.T, bs []blob, isYAML bool) string {
	t.Helper()
	var b strings.Builder
	for _, x := range bs {
		if isYAML {
			y, err := yaml.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(y)
			continue
		}
		js, err := json.MarshalIndent(x, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		b.Write(js)
		b.WriteByte('\n')
	}
	return b.String()
}

func clone(t *testing.T, b blob) blob {
	t.Helper()
	out, err := parseBlobs([]byte(encodeBlobs(t, []blob{b}, false)), false)
	if err != nil || len(out) != 1 {
		t.Fatalf("clone blob: %v", err)
	}
	return out[0]
}

func ofSchema(bs []blob, schema string) []blob {
	var out []blob
	for _, b := range bs {
		if b["schema"] == schema {
			out = append(out, b)
		}
	}
	return out
}

func first(t *testing.T, bs []blob, schema string) blob {
	t.Helper()
	list := ofSchema(bs, schema)
	if len(list) == 0 {
		t.Fatalf("no %s blob", schema)
	}
	return list[0]
}

// withoutBundle drops the bundle blobs named name.
func withoutBundle(bs []blob, name any) []blob {
	var out []blob
	for _, b := range bs {
		if b["schema"] != "olm.bundle" || b["name"] != name {
			out = append(out, b)
		}
	}
	return out
}

func entries(t *testing.T, ch blob) []blob {
	t.Helper()
	list, ok := ch["entries"].([]any)
	if !ok || len(list) == 0 {
		t.Fatalf("channel %v has no entries", ch["name"])
	}
	out := make([]blob, len(list))
	for i, e := range list {
		out[i] = e.(blob)
	}
	return out
}

func setEntries(ch blob, es []blob) {
	list := make([]any, len(es))
	for i, e := range es {
		list[i] = e
	}
	ch["entries"] = list
}

// head is the entry nothing replaces or skips; tail is an entry that replaces nothing.
func head(t *testing.T, ch blob) blob {
	t.Helper()
	targets := map[any]bool{}
	for _, e := range entries(t, ch) {
		targets[e["replaces"]] = true
		if skips, ok := e["skips"].([]any); ok {
			for _, s := range skips {
				targets[s] = true
			}
		}
	}
	for _, e := range entries(t, ch) {
		if !targets[e["name"]] {
			return e
		}
	}
	t.Fatalf("channel %v has no head", ch["name"])
	return nil
}

func tail(t *testing.T, ch blob) blob {
	t.Helper()
	for _, e := range entries(t, ch) {
		if e["replaces"] == nil {
			return e
		}
	}
	t.Fatalf("channel %v has no tail", ch["name"])
	return nil
}

func bundleNamed(t *testing.T, bs []blob, name any) blob {
	t.Helper()
	for _, b := range ofSchema(bs, "olm.bundle") {
		if b["name"] == name {
			return b
		}
	}
	t.Fatalf("no bundle %v", name)
	return nil
}

func props(t *testing.T, b blob) []blob {
	t.Helper()
	list, _ := b["properties"].([]any)
	out := make([]blob, len(list))
	for i, p := range list {
		out[i] = p.(blob)
	}
	return out
}

func prop(t *testing.T, b blob, typ string) blob {
	t.Helper()
	for _, p := range props(t, b) {
		if p["type"] == typ {
			return p
		}
	}
	t.Fatalf("bundle %v has no %s property", b["name"], typ)
	return nil
}

func addProp(b blob, p blob) {
	list, _ := b["properties"].([]any)
	b["properties"] = append(list, any(p))
}

func objectProp(manifest string) blob {
	return blob{"type": "olm.bundle.object", "value": blob{"data": base64.StdEncoding.EncodeToString([]byte(manifest))}}
}

// rename renames a bundle everywhere it is named (bundle blob, entries, replaces, skips).
func rename(bs []blob, old, new string) {
	for _, b := range bs {
		switch b["schema"] {
		case "olm.bundle":
			if b["name"] == old {
				b["name"] = new
			}
		case "olm.channel":
			list, _ := b["entries"].([]any)
			for _, x := range list {
				e := x.(blob)
				for _, k := range []string{"name", "replaces"} {
					if e[k] == old {
						e[k] = new
					}
				}
				skips, _ := e["skips"].([]any)
				for i, s := range skips {
					if s == old {
						skips[i] = new
					}
				}
			}
		}
	}
}

func deprecations(pkg string, entries ...blob) blob {
	list := make([]any, len(entries))
	for i, e := range entries {
		list[i] = e
	}
	return blob{"schema": "olm.deprecations", "package": pkg, "entries": list}
}

func depEntry(schema, name, msg string) blob {
	ref := blob{"schema": schema}
	if name != "" {
		ref["name"] = name
	}
	e := blob{"reference": ref}
	if msg != "" {
		e["message"] = msg
	}
	return e
}

const configMapYAML = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: parity\ndata:\n  key: value\n"

type mutation struct {
	name string
	only string // "yaml" or "json" restricts the mutation to one fixture format
	pass bool   // the verdict the mutation is meant to get from opm
	fn   func(t *testing.T, m *mutant)
}

// structural edits, applied through the parsed blobs.
func edit(fn func(t *testing.T, m *mutant, bs []blob) []blob) func(*testing.T, *mutant) {
	return func(t *testing.T, m *mutant) {
		m.edit(func(bs []blob) []blob { return fn(t, m, bs) })
	}
}

func firstChannel(t *testing.T, bs []blob) blob { return first(t, bs, "olm.channel") }

var mutations = []mutation{
	{"unmodified", "", true, func(*testing.T, *mutant) {}},
	{"re-encoded", "", true, edit(func(_ *testing.T, _ *mutant, bs []blob) []blob { return bs })},

	// package blobs
	{"duplicate-package", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		return append(bs, clone(t, first(t, bs, "olm.package")))
	})},
	{"default-channel-nowhere", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		first(t, bs, "olm.package")["defaultChannel"] = "nowhere"
		return bs
	})},
	{"default-channel-removed", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		delete(first(t, bs, "olm.package"), "defaultChannel")
		return bs
	})},
	{"package-name-not-dns1123", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		const bad = "Parity_Operator"
		first(t, bs, "olm.package")["name"] = bad
		for _, b := range bs {
			if b["package"] == m.pkg {
				b["package"] = bad
			}
			if b["schema"] == "olm.bundle" {
				prop(t, b, "olm.package")["value"].(blob)["packageName"] = bad
			}
		}
		return bs
	})},
	{"package-icon-not-base64", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		first(t, bs, "olm.package")["icon"] = blob{"base64data": "not base64!", "mediatype": "image/png"}
		return bs
	})},

	// channels
	{"duplicate-channel", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		return append(bs, clone(t, firstChannel(t, bs)))
	})},
	{"channel-unknown-package", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := clone(t, firstChannel(t, bs))
		ch["package"] = "no-such-package"
		return append(bs, ch)
	})},
	{"channel-empty-entries", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := clone(t, firstChannel(t, bs))
		ch["name"] = "parity-empty"
		ch["entries"] = []any{}
		return append(bs, ch)
	})},
	{"drop-channel-entry-tail", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := firstChannel(t, bs)
		tl := tail(t, ch)
		var kept []blob
		for _, e := range entries(t, ch) {
			if e["name"] != tl["name"] {
				kept = append(kept, e)
			}
		}
		setEntries(ch, kept)
		return bs
	})},
	{"drop-channel-entry-head", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := firstChannel(t, bs)
		h := head(t, ch)
		var kept []blob
		for _, e := range entries(t, ch) {
			if e["name"] != h["name"] {
				kept = append(kept, e)
			}
		}
		setEntries(ch, kept)
		return bs
	})},
	{"channel-entry-without-bundle", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := firstChannel(t, bs)
		es := entries(t, ch)
		setEntries(ch, append(es, blob{"name": "parity-ghost.v9.9.9", "replaces": head(t, ch)["name"]}))
		return bs
	})},
	{"channel-duplicate-entry", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := firstChannel(t, bs)
		es := entries(t, ch)
		setEntries(ch, append(es, blob{"name": tail(t, ch)["name"]}))
		return bs
	})},
	{"replaces-cycle", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		ch := firstChannel(t, bs)
		tail(t, ch)["replaces"] = head(t, ch)["name"]
		return bs
	})},
	{"replaces-self", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		h := head(t, firstChannel(t, bs))
		h["replaces"] = h["name"]
		return bs
	})},
	{"multiple-heads", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		delete(head(t, firstChannel(t, bs)), "replaces")
		return bs
	})},
	{"replaces-unknown-bundle", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		tail(t, firstChannel(t, bs))["replaces"] = "parity-gone.v0.0.1"
		return bs
	})},
	{"skips-unknown-bundle", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		head(t, firstChannel(t, bs))["skips"] = []any{"parity-gone.v0.0.1"}
		return bs
	})},
	{"skips-empty-entry", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		head(t, firstChannel(t, bs))["skips"] = []any{""}
		return bs
	})},
	{"skiprange-bad", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		head(t, firstChannel(t, bs))["skipRange"] = ">=v0.1 <<1"
		return bs
	})},
	{"skiprange-good", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		head(t, firstChannel(t, bs))["skipRange"] = ">=0.0.1 <0.0.2"
		return bs
	})},
	{"nested-keys-differing-in-case", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		// opm re-encodes each blob through a map, so "name" (sorting after "Name") is the entry's name
		tail(t, firstChannel(t, bs))["Name"] = "parity-shadowed.v0.0.1"
		return bs
	})},

	// bundles
	{"drop-bundle", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		name := tail(t, firstChannel(t, bs))["name"]
		bundleNamed(t, bs, name)
		return withoutBundle(bs, name)
	})},
	{"duplicate-bundle", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		return append(bs, clone(t, first(t, bs, "olm.bundle")))
	})},
	{"bundle-not-in-channel", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		b := clone(t, first(t, bs, "olm.bundle"))
		b["name"] = "parity-extra.v99.0.0"
		prop(t, b, "olm.package")["value"].(blob)["version"] = "99.0.0"
		return append(bs, b)
	})},
	{"bundle-unknown-package", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		first(t, bs, "olm.bundle")["package"] = "no-such-package"
		return bs
	})},
	{"version-v-prefix", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.package")["value"].(blob)["version"] = "v1.0"
		return bs
	})},
	{"version-number", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.package")["value"].(blob)["version"] = json.Number("1")
		return bs
	})},
	{"version-duplicate", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		list := ofSchema(bs, "olm.bundle")
		v := prop(t, list[0], "olm.package")["value"].(blob)["version"]
		prop(t, list[1], "olm.package")["value"].(blob)["version"] = v
		return bs
	})},
	{"version-build-metadata", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		pv := prop(t, first(t, bs, "olm.bundle"), "olm.package")["value"].(blob)
		pv["version"] = pv["version"].(string) + "+parity.1"
		return bs
	})},
	{"package-property-value-string", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.package")["value"] = "not an object"
		return bs
	})},
	{"package-property-missing", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		b := first(t, bs, "olm.bundle")
		var kept []any
		for _, p := range props(t, b) {
			if p["type"] != "olm.package" {
				kept = append(kept, p)
			}
		}
		b["properties"] = kept
		return bs
	})},
	{"image-uppercase", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		first(t, bs, "olm.bundle")["image"] = "quay.io/Parity/OPERATOR-Bundle:1.0"
		return bs
	})},
	{"related-image-uppercase", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		b := first(t, bs, "olm.bundle")
		list, _ := b["relatedImages"].([]any)
		b["relatedImages"] = append(list, blob{"name": "parity", "image": "quay.io/Parity/Image:1"})
		return bs
	})},
	{"related-image-empty", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		b := first(t, bs, "olm.bundle")
		list, _ := b["relatedImages"].([]any)
		b["relatedImages"] = append(list, blob{"name": "parity", "image": ""})
		return bs
	})},
	{"no-image-with-objects", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		b := first(t, bs, "olm.bundle")
		delete(b, "image")
		addProp(b, objectProp(configMapYAML))
		return bs
	})},
	{"no-image-no-objects", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		delete(first(t, bs, "olm.bundle"), "image")
		return bs
	})},
	{"name-null", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		first(t, bs, "olm.bundle")["name"] = nil
		return bs
	})},
	{"name-number", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		first(t, bs, "olm.bundle")["name"] = json.Number("5")
		return bs
	})},
	{"keys-differing-in-case", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		b := first(t, bs, "olm.bundle")
		b["Name"] = b["name"]
		return bs
	})},
	{"schema-missing", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		delete(first(t, bs, "olm.bundle"), "schema")
		return bs
	})},
	{"unknown-schema-blob", "", true, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, blob{"schema": "parity.example.com/note", "package": m.pkg, "text": "kept as is"})
	})},

	// properties
	{"property-value-missing", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		delete(prop(t, first(t, bs, "olm.bundle"), "olm.gvk"), "value")
		return bs
	})},
	{"property-value-missing-unknown-type", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "parity.example.com/flag"})
		return bs
	})},
	{"property-value-null", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.gvk")["value"] = nil
		return bs
	})},
	{"upper-case-keys", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		p := first(t, bs, "olm.package")
		for _, k := range []string{"schema", "name", "defaultChannel"} {
			p[strings.ToUpper(k)] = p[k]
			delete(p, k)
		}
		return bs
	})},
	{"channel-property-priority-float-integral", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "olm.channel", "value": blob{"channelName": "x", "priority": json.Number("1e2")}})
		return bs
	})},
	{"channel-property-priority-fraction", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "olm.channel", "value": blob{"channelName": "x", "priority": json.Number("1.5")}})
		return bs
	})},
	{"channel-property-priority-overflow", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "olm.channel", "value": blob{"channelName": "x", "priority": json.Number("1e30")}})
		return bs
	})},
	{"package-required-bad-range", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "olm.package.required", "value": blob{"packageName": "x", "versionRange": "not a range"}})
		return bs
	})},
	{"gvk-required-wrong-type", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "olm.gvk.required", "value": []any{"x"}})
		return bs
	})},
	{"csv-metadata-wrong-type", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.csv.metadata")["value"].(blob)["keywords"] = "one, two"
		return bs
	})},
	{"property-gvk-version-number", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.gvk")["value"].(blob)["version"] = json.Number("1")
		return bs
	})},
	{"bundle-object-not-base64", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), blob{"type": "olm.bundle.object", "value": blob{"data": "%%% not base64"}})
		return bs
	})},
	{"bundle-object-invalid-yaml", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), objectProp("kind: ConfigMap\nmetadata: {name: [unclosed\n"))
		return bs
	})},
	{"bundle-object-valid", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		addProp(first(t, bs, "olm.bundle"), objectProp(configMapYAML))
		return bs
	})},
	{"bundle-object-json-after-form-feed", "", true, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		// opm takes data whose first non-space (unicode.IsSpace) character is '{' as JSON, unchecked
		addProp(first(t, bs, "olm.bundle"), objectProp("\f{\"kind\": [unclosed"))
		return bs
	})},
	{"release-invalid", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.package")["value"].(blob)["release"] = "01"
		return bs
	})},
	{"release-name-not-normalized", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		prop(t, first(t, bs, "olm.bundle"), "olm.package")["value"].(blob)["release"] = "1"
		return bs
	})},
	{"release-normalized", "", true, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		b := first(t, bs, "olm.bundle")
		pv := prop(t, b, "olm.package")["value"].(blob)
		pv["release"] = "2.rc"
		rename(bs, b["name"].(string), m.pkg+"-v"+pv["version"].(string)+"-2.rc")
		return bs
	})},

	// deprecations
	{"deprecations-valid", "", true, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		ch := firstChannel(t, bs)
		return append(bs, deprecations(m.pkg,
			depEntry("olm.package", "", "use another operator"),
			depEntry("olm.channel", ch["name"].(string), "use another channel"),
			depEntry("olm.bundle", tail(t, ch)["name"].(string), "upgrade")))
	})},
	{"deprecations-unknown-bundle", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.bundle", "parity-gone.v0.0.1", "gone")))
	})},
	{"deprecations-unknown-channel", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.channel", "parity-gone", "gone")))
	})},
	{"deprecations-unknown-package", "", false, edit(func(t *testing.T, _ *mutant, bs []blob) []blob {
		return append(bs, deprecations("no-such-package", depEntry("olm.package", "", "gone")))
	})},
	{"deprecations-two-blobs", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.package", "", "a")), deprecations(m.pkg))
	})},
	{"deprecations-duplicate-entry", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.package", "", "a"), depEntry("olm.package", "", "b")))
	})},
	{"deprecations-package-ref-with-name", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.package", m.pkg, "a")))
	})},
	{"deprecations-unknown-schema", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.gvk", "x", "a")))
	})},
	{"deprecations-no-message", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, deprecations(m.pkg, depEntry("olm.package", "", "")))
	})},
	{"deprecations-default-channel-without-blob", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		// opm invents an empty default channel for a package whose defaultChannel has no blob; the
		// package is invalid anyway, and deprecating that channel must not hide it
		first(t, bs, "olm.package")["defaultChannel"] = "parity-phantom"
		return append(bs, deprecations(m.pkg, depEntry("olm.channel", "parity-phantom", "a")))
	})},
	{"deprecations-entries-wrong-type", "", false, edit(func(t *testing.T, m *mutant, bs []blob) []blob {
		return append(bs, blob{"schema": "olm.deprecations", "package": m.pkg, "entries": blob{"reference": "x"}})
	})},

	// file syntax
	{"json-trailing-comma", "json", false, func(t *testing.T, m *mutant) { m.replace("\n}", ",\n}", 1) }},
	{"json-truncated", "json", false, func(t *testing.T, m *mutant) { s := m.text(); m.setText(s[:len(s)/2]) }},
	{"json-exact-duplicate-key-last-wins", "json", true, func(t *testing.T, m *mutant) {
		m.replace(`"image": "`, `"image": "Not A/Valid:Image:Ref", "image": "`, 1)
	}},
	{"json-top-level-array", "", false, func(t *testing.T, m *mutant) { m.write("extra.json", "[]\n") }},
	{"json-then-yaml", "", true, func(t *testing.T, m *mutant) {
		// a file that starts as JSON and goes on as YAML: opm reads the rest as YAML
		bs := m.blobs()
		m.write(m.pkg+"/mixed.yaml", strings.TrimSpace(encodeBlobs(t, bs[:1], false))+"\n"+encodeBlobs(t, bs[1:], true))
		if err := os.Remove(m.file); err != nil {
			t.Fatal(err)
		}
	}},
	{"yaml-bad-separator", "yaml", false, func(t *testing.T, m *mutant) { m.replace("\n---\n", "\n--- x\n", 2) }},
	{"yaml-separator-with-comment", "yaml", true, func(t *testing.T, m *mutant) { m.replace("\n---\n", "\n--- # next\n", -1) }},
	{"yaml-tab-indentation", "yaml", false, func(t *testing.T, m *mutant) { m.replace("\n  ", "\n\t", 1) }},
	// a document the converter's scan refuses (a tab) just before its separator: the search for the
	// separator resumes at the refused line and must still find the next one, good or bad
	{"yaml-tab-comment-before-separator", "yaml", true, func(t *testing.T, m *mutant) { m.replace("\n---\n", "\n#\ttabbed\n---\n", -1) }},
	{"yaml-tab-comment-before-bad-separator", "yaml", false, func(t *testing.T, m *mutant) { m.replace("\n---\n", "\n#\ttabbed\n--- x\n", 2) }},
	{"yaml-exact-duplicate-key", "yaml", true, func(t *testing.T, m *mutant) {
		m.replace("\nschema: olm.bundle\n", "\nschema: olm.bundle\nschema: olm.bundle\n", 1)
	}},
	// a CSV's metadata is type-checked without its strings (catalog.LoadOptions.CSVTypesOnly): its types
	// still count, and a property that only looks like one (its type said again after its value, its value
	// said twice) is read whole
	{"yaml-csv-metadata-object-for-a-string", "yaml", false, func(t *testing.T, m *mutant) {
		m.replace("    displayName: ECR Secret Operator\n", "    displayName:\n      name: ECR Secret Operator\n", 1)
	}},
	{"yaml-csv-metadata-text-for-an-object", "yaml", false, func(t *testing.T, m *mutant) {
		m.replace("    apiServiceDefinitions: {}\n", "    apiServiceDefinitions: |\n      owned\n", 1)
	}},
	{"yaml-csv-metadata-type-said-after-its-value", "yaml", true, func(t *testing.T, m *mutant) {
		m.replace("- type: olm.package\n  value:\n    packageName: ecr-secret-operator\n    version: 0.3.2\n",
			"- type: olm.csv.metadata\n  value:\n    packageName: ecr-secret-operator\n    version: 0.3.2\n  type: olm.package\n", 1)
	}},
	{"yaml-csv-metadata-value-said-twice", "yaml", true, func(t *testing.T, m *mutant) {
		m.replace("- type: olm.csv.metadata\n  value:\n    annotations:\n",
			"- type: olm.csv.metadata\n  value:\n    displayName: [1]\n  value:\n    annotations:\n", 1)
	}},
	{"yaml-unquoted-boolean-name", "yaml", false, func(t *testing.T, m *mutant) {
		// YAML 1.1: an unquoted yes is a boolean, so this extra channel's name is not a string
		m.edit(func(bs []blob) []blob {
			ch := clone(t, firstChannel(t, bs))
			ch["name"] = "PARITY-YES"
			return append(bs, ch)
		})
		m.replace("name: PARITY-YES\n", "name: yes\n", 1)
	}},
	{"yaml-anchors-and-aliases", "yaml", true, func(t *testing.T, m *mutant) {
		m.write("aliases.yaml", "schema: parity.example.com/note\nbase: &b {a: 1, b: [x, y]}\ncopy: *b\nmerged:\n  <<: *b\n  c: 2\n")
	}},
	{"crlf-line-endings", "", true, func(t *testing.T, m *mutant) { m.setText(strings.ReplaceAll(m.text(), "\n", "\r\n")) }},
	{"utf8-bom-yaml", "yaml", true, func(t *testing.T, m *mutant) { m.setText("\ufeff" + m.text()) }},
	{"utf8-bom-json", "json", false, func(t *testing.T, m *mutant) { m.setText("\ufeff" + m.text()) }},

	// extra files (see also tinyFiles)
	{"readme-plain-text", "", false, func(t *testing.T, m *mutant) {
		m.write("README.md", "This catalog holds community operators.\nSee CONTRIBUTING for how to add one.\n")
	}},
	{"readme-indexignored", "", true, func(t *testing.T, m *mutant) {
		m.write("README.md", "This catalog holds community operators.\n")
		m.write(".indexignore", "*.md\n")
	}},
	{"indexignore-broken-file", "", true, func(t *testing.T, m *mutant) {
		m.write(m.pkg+"/broken.json", "{\"schema\": \"olm.bundle\",\n")
		m.write(m.pkg+"/.indexignore", "# drafts\nbroken.json\n")
	}},
	{"indexignore-elsewhere-does-not-apply", "", false, func(t *testing.T, m *mutant) {
		// an .indexignore only covers its own directory tree
		m.write(m.pkg+"/broken.json", "{\"schema\": \"olm.bundle\",\n")
		m.write("other/.indexignore", "broken.json\n")
	}},
	{"symlink-to-file-inside", "", false, func(t *testing.T, m *mutant) {
		// the package is loaded twice: a duplicate package
		m.symlink(filepath.Join(m.pkg, filepath.Base(m.file)), "link-"+filepath.Base(m.file))
	}},
	{"symlink-absolute-to-ignored-file-inside", "", true, func(t *testing.T, m *mutant) {
		real := filepath.Join(m.root, m.pkg, "real.data")
		if err := os.Rename(m.file, real); err != nil {
			t.Fatal(err)
		}
		m.write(m.pkg+"/.indexignore", "real.data\n")
		m.symlink(real, m.pkg+"/"+filepath.Base(m.file))
	}},
	{"symlink-relative-to-ignored-copy", "", true, func(t *testing.T, m *mutant) {
		// the package file moves under an ignored name; a relative symlink is what gets loaded
		if err := os.Rename(m.file, filepath.Join(m.root, m.pkg, "real.data")); err != nil {
			t.Fatal(err)
		}
		m.write(m.pkg+"/.indexignore", "real.data\n")
		m.symlink("real.data", m.pkg+"/"+filepath.Base(m.file))
	}},
	{"symlink-to-dir", "", false, func(t *testing.T, m *mutant) { m.symlink(m.pkg, "link-dir") }},
	{"symlink-dangling", "", false, func(t *testing.T, m *mutant) { m.symlink("nowhere.json", "dangling.json") }},
}

// tinyFiles are small extra files added next to the package, with opm's verdict on them.
var tinyFiles = []struct {
	name, content string
	pass          bool
}{
	{"empty", "", true},
	{"newlines-only", "\n\n\n", false},
	{"spaces-only", "   ", false},
	{"whitespace-only", "  \n\n\t\n  ", false},
	{"crlf-only", "\r\n", false},
	{"comment-only", "# nothing here yet\n# really\n", false},
	{"separator-only", "---\n", false},
	{"separators-only", "---\n---\n", false},
	{"separator-and-comment", "--- \n# c\n", false},
	{"document-end-marker", "...\n", false},
	{"bom-only", "\ufeff", false},
	{"null", "null\n", false},
	{"tilde", "~", false},
	{"empty-object", "{}", false},
	{"top-level-array", "[]", false},
	{"top-level-string", "\"x\"", false},
	{"top-level-number", "5", false},
	{"json-then-separator", "{\"schema\":\"x\"}\n---\n", false},
	{"json-stream", "{\"schema\":\"x\"}\n{\"schema\":\"y\"}\n", true},
	{"json-stream-one-line", "{\"schema\":\"x\"} {\"schema\":\"y\"}", true},
	{"json-then-yaml-key", "{\"schema\":\"x\"}\nschema: y\n", false},
	{"two-json-then-yaml-key", "{\"schema\":\"x\"}\n{\"schema\":\"y\"}\nschema: z\n", false},
	{"json-then-blank-lines", "{\"schema\":\"x\"}\n\n  \n", true},
	{"yaml-then-empty-document", "schema: x\n---\n", true},
	{"yaml-flow-mapping", "{schema: x, name: y}\n", false},
	{"yaml-document-end", "schema: x\n...\n", true},
	{"separator-then-document", "---\nschema: x\n", true},
	{"separator-no-newline", "---", false},
	{"document-then-separator-no-newline", "schema: x\n---", true},
	{"double-separator-then-document", "---\n---\nschema: x\n", false},
	{"document-then-two-separators", "schema: x\n---\n---\n", false},
	{"comment-then-separator", "# generated\n---\nschema: x\n", false},
	{"separator-comment-then-document", "--- # first\nschema: x\n", true},
	{"json-depth-9999", nested(9998), true},
	{"json-depth-10000", nested(9999), true},
	{"json-depth-10001", nested(10000), false},
	{"json-control-character-in-schema", "{\"schema\":\"\n\"}", true}, // not JSON, but YAML
	{"json-invalid-utf8", "{\"schema\":\"x\",\"d\":\"\xff\xfe\"}", true},
	{"yaml-invalid-utf8", "schema: x\nd: \xff\xfe\n", false},
	{"json-nul-in-string", "{\"schema\":\"x\",\"d\":\"a\x00b\"}", false},
	{"json-escaped-key", "{\"sch\\u0065ma\":\"x\"}", true},
	{"json-long-s-key", "{\"\u017fchema\":\"x\"}", true},
	{"json-line-comment", "// generated\n{\"schema\":\"x\"}", false},
	{"json-after-nbsp", "\u00a0{\"schema\":\"x\"}", true},
	{"json-after-form-feed", "\f{\"schema\":\"x\"}", true},
	{"json-keys-differing-in-case", "{\"schema\":\"x\",\"Schema\":\"x\"}", false},
	{"json-nested-exact-duplicate-key", "{\"schema\":\"x\",\"d\":{\"a\":1,\"a\":2}}", true},
	{"yaml-nested-exact-duplicate-key", "schema: x\nd:\n  a: 1\n  a: 2\n", true},
	{"yaml-non-string-key", "schema: x\n1: one\ntrue: yes\n", true},
}

// nested is an unknown-schema blob whose deepest value is at depth n+1.
func nested(n int) string {
	return "{\"schema\":\"x\",\"d\":" + strings.Repeat("[", n) + strings.Repeat("]", n) + "}"
}

func init() {
	for _, f := range tinyFiles {
		content := f.content
		mutations = append(mutations, mutation{"file-" + f.name, "yaml", f.pass, func(t *testing.T, m *mutant) {
			m.write("extra.yaml", content)
		}})
	}
}

// fixture is a real package to mutate.
type fixture struct {
	format string // "yaml" or "json"
	src    string
}

func copyPackage(t *testing.T, src, dst string) string {
	t.Helper()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	var file string
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
		file = filepath.Join(dst, e.Name())
	}
	if len(ents) != 1 {
		t.Fatalf("package %s: want exactly one catalog file, found %d", src, len(ents))
	}
	return file
}

// refusedOnPurpose requires opm's verdict on dir to be opmPass and catalogbot to refuse the catalog with a
// catalog-file-refused diagnostic naming the file: where catalogbot differs from opm on purpose.
func refusedOnPurpose(ctx context.Context, t *testing.T, bin, dir string, opmPass bool) {
	t.Helper()
	if got, out := opmVerdict(ctx, t, bin, dir); got != opmPass {
		t.Errorf("mutation meant to make opm accept=%v, but opm accept=%v: the mutation is wrong\n%s", opmPass, got, out)
	}
	res, ours := ourVerdict(ctx, t, dir)
	for _, d := range res.Diagnostics {
		if d.Rule == catalog.RuleRefused && d.File != "" {
			return
		}
	}
	t.Errorf("catalogbot did not refuse the symbolic link:\n%s", ours)
}

func TestParityMutations(t *testing.T) {
	bin := opmBinary(t)
	ctx := context.Background()
	fixtures := []fixture{
		{"yaml", sharedData(t, "catalogs", "community-operators-prod-v4.20", "ecr-secret-operator")},
		{"json", sharedData(t, "catalogs", "composed-279", "camel-karavan-operator")},
	}
	bystander := sharedData(t, "catalogs", "community-operators-prod-v4.20", "libredb-studio-operator")
	seen := map[string]bool{}
	for _, mu := range mutations {
		if seen[mu.name] {
			t.Fatalf("mutation %s is listed twice", mu.name)
		}
		seen[mu.name] = true
	}
	n := 0
	for _, fx := range fixtures {
		for _, mu := range mutations {
			if mu.only != "" && mu.only != fx.format {
				continue
			}
			n++
			t.Run(fx.format+"/"+mu.name, func(t *testing.T) {
				t.Parallel()
				root := t.TempDir()
				pkg := filepath.Base(fx.src)
				m := &mutant{t: t, root: root, pkg: pkg, yaml: fx.format == "yaml",
					file: copyPackage(t, fx.src, filepath.Join(root, pkg))}
				copyPackage(t, bystander, filepath.Join(root, filepath.Base(bystander)))
				mu.fn(t, m)
				// a symbolic link is refused whatever opm says (rule catalog-file-refused): the image build
				// refuses it, and readers follow links differently (issue 33 item 6)
				if strings.HasPrefix(mu.name, "symlink-") {
					refusedOnPurpose(ctx, t, bin, root, mu.pass)
					return
				}
				if got := compareVerdicts(ctx, t, bin, root); got != mu.pass {
					t.Errorf("mutation meant to make opm accept=%v, but opm accept=%v: the mutation is wrong", mu.pass, got)
				}
			})
		}
	}
	if n < 30 {
		t.Fatalf("only %d mutations ran", n)
	}
}

// fragments build small random files around the places where opm's reader (Kubernetes' YAML-or-JSON
// decoder) is subtle: Unicode spaces, separators, JSON followed by YAML, broken syntax.
var fragments = []string{" ", "\t", "\n", "\r\n", "\f", "\v", "\u00a0", "\u0085", "\ufeff", "\u2028",
	"---", "---\n", "--- #c\n", "...\n", "# c\n", "#c",
	`{"schema":"x"}`, `{"schema":"y","a":[1,2]}`, "schema: x\n", "schema: y\nname: n\n", "{schema: z}",
	"{", "}", ",", ":", "[", "]", `"`, "a: b: c\n", "null", "~", "- a\n", "  ", "\x00", "\xff", "x", "1",
	`{"Schema":"x"}`, `{"schema":"x","SCHEMA":"x"}`, `{"schema":5}`, "schema: 5\n", "schema:\n", "\"schema\": x\n",
	"  schema: x\n", "\tschema: x\n", "&a schema: x\n", "*a\n", "%YAML 1.1\n", "? schema\n: x\n", "[schema, x]\n",
	`{"schema":"x"}{"schema":"x"}`,
}

func randomFile(r *rand.Rand) string {
	var b strings.Builder
	for range 1 + r.Intn(10) {
		b.WriteString(fragments[r.Intn(len(fragments))])
	}
	return b.String()
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// often returns good most of the time and one of the bad values otherwise.
func often[T any](r *rand.Rand, good T, bad ...T) T {
	if r.Intn(10) < 8 {
		return good
	}
	return pick(r, bad...)
}

// randomGraphCatalog is a one-package catalog with a random upgrade graph over up to five bundles, and
// occasional bad fields.
func randomGraphCatalog(r *rand.Rand) string {
	names := []string{"p.v1.0.0", "p.v1.1.0", "p.v1.2.0", "p.v2.0.0", "p-v1.0.0-1"}
	nb := 1 + r.Intn(len(names))
	blobs := []any{map[string]any{"schema": "olm.package", "name": often(r, "p", "P"), "defaultChannel": often(r, "a", "b", "z", "")}}
	for c, chName := range []string{"a", "b"}[:1+r.Intn(2)] {
		perm := r.Perm(nb)
		var entries []any
		for i := range 1 + r.Intn(nb) {
			e := map[string]any{"name": names[perm[i]]}
			if r.Intn(2) == 0 {
				e["replaces"] = pick(r, append(names[:nb:nb], "gone.v0")...)
			}
			if r.Intn(4) == 0 {
				e["skips"] = []any{often(r, pick(r, names[:nb]...), "", "gone")}
			}
			if r.Intn(6) == 0 {
				e["skipRange"] = often(r, pick(r, ">=1.0.0 <1.2.0", "<2.0.0"), ">=v1")
			}
			entries = append(entries, e)
		}
		if c == 1 && r.Intn(10) == 0 {
			entries = append(entries, entries[0])
		}
		blobs = append(blobs, map[string]any{"schema": "olm.channel", "package": "p", "name": chName, "entries": entries})
	}
	for i, name := range names[:nb] {
		ver := name[strings.Index(name, "v")+1:]
		val := map[string]any{"packageName": "p", "version": often(r, ver, "1.0.0", "v1", "1.0.0+b")}
		if strings.HasPrefix(name, "p-") {
			val["version"], val["release"] = "1.0.0", often(r, "1", "01", "")
		}
		image := often(r, fmt.Sprintf("quay.io/x/p:%d", i), "", "Quay.io/X/p")
		blobs = append(blobs, map[string]any{"schema": "olm.bundle", "package": "p", "name": name, "image": image,
			"properties": []any{map[string]any{"type": "olm.package", "value": val}}})
	}
	if r.Intn(4) == 0 {
		ref := map[string]any{"schema": pick(r, "olm.bundle", "olm.channel", "olm.package"), "name": pick(r, "", "a", "z", names[0])}
		blobs = append(blobs, deprecations("p", blob{"reference": ref, "message": often(r, "m", "")}))
	}
	var b strings.Builder
	for _, x := range blobs {
		js, _ := json.Marshal(x)
		b.Write(js)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestParityRandomCatalogs compares verdicts on random (fixed-seed) catalogs: files of tricky fragments,
// and small packages with random upgrade graphs. Larger runs of the same generators (11,000 inputs) found
// no difference once the loader bugs they exposed were fixed.
func TestParityRandomCatalogs(t *testing.T) {
	bin := opmBinary(t)
	ctx := context.Background()
	r := rand.New(rand.NewSource(20260723))
	for i := range 200 {
		name, file, text := "fragments", "f.yaml", randomFile(r)
		if i%2 == 1 {
			name, file, text = "graph", "f.json", randomGraphCatalog(r)
		}
		t.Run(fmt.Sprintf("%s-%03d", name, i), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			compareVerdicts(ctx, t, bin, dir)
			if t.Failed() {
				t.Logf("input:\n%s", text)
			}
		})
	}
}
