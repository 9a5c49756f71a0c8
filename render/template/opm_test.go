package template

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/reftools"
)

// differentialBundles are the real bundles the differential tests serve: versions with patch, minor and
// major steps.
var differentialBundles = []string{
	"etcd/0.9.2", "etcd/0.9.4",
	"cockroachdb/5.0.3", "cockroachdb/5.0.4", "cockroachdb/6.0.0",
	"grafana-operator/5.22.0", "grafana-operator/5.22.2", "grafana-operator/5.24.0",
	"hawtio-operator/1.1.0", "hawtio-operator/1.1.1", "hawtio-operator/1.2.0",
}

// templateCase is a template written against the test registry.
type templateCase struct {
	name string
	// text is the template, with {tag:B} and {digest:B} replaced by bundle B's references.
	text string
	typ  string
}

func (c templateCase) render(r *registry) []byte {
	s := c.text
	for b, ref := range r.tag {
		s = strings.ReplaceAll(s, "{tag:"+b+"}", ref)
		s = strings.ReplaceAll(s, "{digest:"+b+"}", r.digest[b])
	}
	return []byte(s)
}

var renderCases = []templateCase{
	{name: "basic", text: `schema: olm.template.basic
entries:
- schema: olm.package
  name: etcd
  defaultChannel: alpha
  description: "etcd, <rendered> & kept"
  properties:
  - type: custom.b
    value: {z: 1, a: [2.0, "x"]}
- schema: olm.channel
  package: etcd
  name: alpha
  entries:
  - name: etcdoperator.v0.9.4
    replaces: etcdoperator.v0.9.2
  - name: etcdoperator.v0.9.2
- schema: olm.bundle
  image: {digest:etcd/0.9.4}
- schema: olm.bundle
  name: ignored-name
  image: {tag:etcd/0.9.2}
- schema: custom.other
  package: etcd
  zeta: 1e3
  alpha: true
- schema: olm.deprecations
  package: etcd
  entries:
  - reference: {schema: olm.bundle, name: etcdoperator.v0.9.2}
    message: use 0.9.4
- schema: custom.root
  value: 3
`},
	{name: "basic-json-upper-case-keys", text: `{"Schema": "olm.template.basic", "Entries": [
  {"Schema": "olm.package", "Name": "cockroachdb", "DefaultChannel": "stable"},
  {"schema": "olm.channel", "package": "cockroachdb", "name": "stable", "Entries": [{"Name": "cockroachdb.v5.0.4", "Skips": ["cockroachdb.v5.0.3"]}]},
  {"schema": "olm.bundle", "Image": "{digest:cockroachdb/5.0.4}"},
  {"schema": "olm.bundle", "image": "{digest:cockroachdb/5.0.3}"}
]}
`},
	{name: "basic-typed", typ: "basic", text: `schema: olm.template.basic
entries:
- {schema: olm.package, name: hawtio-operator, defaultChannel: x}
- schema: olm.bundle
  image: {digest:hawtio-operator/1.2.0}
---
schema: ignored.second.document
`},
	{name: "semver-minor-default", text: `schema: olm.semver
candidate:
  bundles:
  - image: {digest:grafana-operator/5.22.0}
  - image: {digest:grafana-operator/5.22.2}
  - image: {digest:grafana-operator/5.24.0}
fast:
  bundles:
  - image: {digest:grafana-operator/5.22.2}
  - image: {digest:grafana-operator/5.24.0}
stable:
  bundles:
  - image: {digest:grafana-operator/5.22.0}
  - image: {digest:grafana-operator/5.22.2}
`},
	{name: "semver-major-and-minor-prefer-major", text: `schema: olm.semver
generateMajorChannels: true
generateMinorChannels: true
defaultChannelTypePreference: major
candidate:
  bundles:
  - image: {digest:cockroachdb/5.0.3}
  - image: {digest:cockroachdb/5.0.4}
  - image: {digest:cockroachdb/6.0.0}
stable:
  bundles:
  - image: {digest:cockroachdb/5.0.3}
  - image: {digest:cockroachdb/5.0.4}
`},
	{name: "semver-major-and-minor", text: `schema: olm.semver
generateMajorChannels: true
generateMinorChannels: true
fast:
  bundles:
  - image: {digest:hawtio-operator/1.1.0}
  - image: {digest:hawtio-operator/1.1.1}
  - image: {digest:hawtio-operator/1.2.0}
`},
	{name: "semver-major-upstream-style-tags", text: `Schema: olm.semver
GenerateMajorChannels: true
GenerateMinorChannels: false
Candidate:
  Bundles:
  - Image: {tag:grafana-operator/5.24.0}
  - Image: {tag:grafana-operator/5.22.0}
  - Image: {tag:grafana-operator/5.22.2}
Stable:
  Bundles:
  - Image: {tag:grafana-operator/5.22.2}
`},
	{name: "semver-json", typ: "semver", text: `{"schema": "olm.semver", "stable": {"bundles": [{"image": "{digest:etcd/0.9.2}"}, {"image": "{digest:etcd/0.9.4}"}]}}`},
}

// requireSameAsOPM renders every case with opm and with Render, in JSON, YAML and mermaid, with and
// without the migration, and requires the same bytes.
func requireSameAsOPM(t *testing.T, opm string, reg *registry, src *Images, cases []templateCase) {
	t.Helper()
	for _, c := range cases {
		for _, format := range []string{"json", "yaml", "mermaid"} {
			for _, level := range []string{"", MigrateCSVMetadata} {
				t.Run(fmt.Sprintf("%s/%s/%s", c.name, format, level), func(t *testing.T) {
					data := c.render(reg)
					opts := Options{Type: c.typ, MigrateLevel: level}
					want, msg, ok := opmTemplate(t, opm, data, opts, format)
					if !ok {
						t.Fatalf("opm failed: %s", msg)
					}
					got, err := ours(t, src, data, opts, format)
					if err != nil {
						t.Fatalf("Render: %v", err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("differs from opm:\n--- opm\n%s\n--- ours\n%s", want, got)
					}
				})
			}
		}
	}
}

// TestRenderMatchesOPM renders every case with opm and with Render, in JSON and YAML, with and without
// the migration, and requires the same bytes.
func TestRenderMatchesOPM(t *testing.T) {
	opm := reftools.OPM(t)
	reg := newRegistry(t, differentialBundles...)
	src := source(t)
	requireSameAsOPM(t, opm, reg, src, renderCases)
}

var errorCases = []templateCase{
	{name: "empty", text: ``},
	{name: "no-schema", text: "entries: []\n"},
	{name: "unknown-schema", text: "schema: olm.template.fancy\n"},
	{name: "schema-not-string", text: "schema: 3\n"},
	{name: "not-a-mapping", text: "- a\n- b\n"},
	{name: "yaml-syntax", text: "schema: olm.semver\nstable: [\n"},
	{name: "unknown-migrate-level", text: "schema: olm.template.basic\n"},
	{name: "basic-type-on-semver", typ: "basic", text: "schema: olm.semver\n"},
	{name: "semver-type-on-basic", typ: "semver", text: "schema: olm.template.basic\nentries: []\n"},
	{name: "basic-bundle-with-package", text: `schema: olm.template.basic
entries:
- schema: olm.bundle
  package: etcd
  image: {digest:etcd/0.9.4}
`},
	{name: "basic-bundle-without-image", text: `schema: olm.template.basic
entries:
- schema: olm.bundle
  name: x
`},
	{name: "basic-entry-without-schema", text: `schema: olm.template.basic
entries:
- name: etcd
  defaultChannel: alpha
`},
	{name: "basic-duplicate-keys", text: `schema: olm.template.basic
entries:
- schema: olm.package
  Name: a
  name: b
`},
	{name: "basic-name-not-string", text: `schema: olm.template.basic
entries:
- schema: olm.package
  name: 7
`},
	{name: "basic-channel-entries-not-list", text: `schema: olm.template.basic
entries:
- schema: olm.channel
  package: etcd
  name: alpha
  entries: 5
`},
	{name: "basic-entries-not-list", text: "schema: olm.template.basic\nentries: {a: 1}\n"},
	{name: "basic-bad-bundle-object", text: `schema: olm.template.basic
entries:
- schema: olm.bundle
  image: x
  properties:
  - type: olm.bundle.object
    value: {data: 12}
`},
	{name: "semver-avoid-skip-patch", text: `schema: olm.semver
avoidSkipPatch: true
stable:
  bundles:
  - image: {digest:etcd/0.9.4}
`},
	{name: "semver-minor-preference-without-minor", text: `schema: olm.semver
generateMajorChannels: true
generateMinorChannels: false
defaultChannelTypePreference: minor
stable: {bundles: [{image: {digest:etcd/0.9.4}}]}
`},
	{name: "semver-major-preference-without-major", text: `schema: olm.semver
defaultChannelTypePreference: major
stable: {bundles: [{image: {digest:etcd/0.9.4}}]}
`},
	{name: "semver-unknown-preference", text: `schema: olm.semver
defaultChannelTypePreference: patch
`},
	{name: "semver-no-bundles", text: "schema: olm.semver\n"},
	{name: "semver-two-packages", text: `schema: olm.semver
stable:
  bundles:
  - image: {digest:etcd/0.9.4}
  - image: {digest:cockroachdb/5.0.4}
`},
	{name: "semver-duplicate-bundle", text: `schema: olm.semver
fast:
  bundles:
  - image: {digest:etcd/0.9.4}
  - image: {tag:etcd/0.9.4}
`},
	{name: "semver-bool-as-string", text: `schema: olm.semver
generateMajorChannels: "yes"
`},
	{name: "semver-wrong-schema-typed", typ: "semver", text: "schema: olm.semverish\n"},
	{name: "unknown-type", typ: "fancy", text: "schema: olm.semver\n"},
}

// TestErrorsMatchOPM gives opm and Render bad templates: both refuse, with the same message, and
// Render names the line.
func TestErrorsMatchOPM(t *testing.T) {
	opm := reftools.OPM(t)
	reg := newRegistry(t, "etcd/0.9.4", "cockroachdb/5.0.4")
	src := source(t)
	for _, c := range errorCases {
		t.Run(c.name, func(t *testing.T) {
			data := c.render(reg)
			opts := Options{Type: c.typ}
			if c.name == "unknown-migrate-level" {
				opts.MigrateLevel = "bundle-object-to-everything"
			}
			msg, te := bothRefuse(t, opm, src, data, opts)
			if te.Msg != msg {
				t.Errorf("message differs:\nopm:  %q\nours: %q", msg, te.Msg)
			}
			if te.File != "template.yaml" {
				t.Errorf("error names file %q", te.File)
			}
		})
	}
}

// bothRefuse renders data with opm and with Render, which must both refuse it (Render with a template
// error), and returns opm's message and Render's error.
func bothRefuse(t *testing.T, opm string, src Source, data []byte, opts Options) (string, *Error) {
	t.Helper()
	_, msg, ok := opmTemplate(t, opm, data, opts, "json")
	if ok {
		t.Fatal("opm accepted the template")
	}
	_, err := ours(t, src, data, opts, "json")
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("Render: want a template error, got %v", err)
	}
	return msg, te
}
