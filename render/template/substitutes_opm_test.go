package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// fbcBundle is an olm.bundle entry of a substitutes template, written out (such entries are not rendered):
// hawtio-operator at version, with extra YAML properties.
func fbcBundle(version, extra string) string {
	return fmt.Sprintf(`- schema: olm.bundle
  name: hawtio-operator.v%[1]s
  package: hawtio-operator
  image: quay.io/example/hawtio-bundle:v%[1]s
  properties:
  - type: olm.package
    value: {packageName: hawtio-operator, version: "%[1]s"}
%[2]s`, version, extra)
}

// substitutesHead is a package with a replaces chain, skips and a skipRange in two channels, over the
// bundles 1.0.0, 1.0.5 and 1.0.9 (written out), before the substitutions.
var substitutesHead = `schema: olm.template.substitutes
entries:
- schema: olm.package
  name: hawtio-operator
  defaultChannel: stable
- schema: olm.channel
  package: hawtio-operator
  name: stable
  entries:
  - name: hawtio-operator.v1.0.0
  - name: hawtio-operator.v1.0.5
    replaces: hawtio-operator.v1.0.0
    skipRange: ">=0.9.0 <1.0.5"
  - name: hawtio-operator.v1.0.9
    replaces: hawtio-operator.v1.0.5
    skips: [hawtio-operator.v1.0.0]
- schema: olm.channel
  package: hawtio-operator
  name: fast
  entries:
  - name: hawtio-operator.v1.0.5
  - name: hawtio-operator.v1.0.9
    skips: [hawtio-operator.v1.0.5]
` + fbcBundle("1.0.0", "") + fbcBundle("1.0.5", "") + fbcBundle("1.0.9", "")

var substitutesCases = []templateCase{
	{name: "two-substitutions", text: substitutesHead + `substitutions:
- name: {digest:hawtio-operator/1.1.0}
  base: hawtio-operator.v1.0.5
- name: {tag:hawtio-operator/1.2.0}
  base: hawtio-operator.v1.0.9
`},
	{name: "no-substitutions-typed", typ: "substitutes", text: substitutesHead},
	{name: "json-base-of-a-chain-start", text: `{"schema": "olm.template.substitutes", "entries": [
  {"schema": "olm.package", "name": "hawtio-operator", "defaultChannel": "stable"},
  {"schema": "olm.channel", "package": "hawtio-operator", "name": "stable", "entries": [
    {"name": "hawtio-operator.v1.0.0"},
    {"name": "hawtio-operator.v1.0.5", "replaces": "hawtio-operator.v1.0.0"}]},
  {"schema": "olm.bundle", "name": "hawtio-operator.v1.0.0", "package": "hawtio-operator", "image": "quay.io/example/hawtio-bundle:v1.0.0",
   "properties": [{"type": "olm.package", "value": {"packageName": "hawtio-operator", "version": "1.0.0"}}]},
  {"schema": "olm.bundle", "name": "hawtio-operator.v1.0.5", "package": "hawtio-operator", "image": "quay.io/example/hawtio-bundle:v1.0.5",
   "properties": [{"type": "olm.package", "value": {"packageName": "hawtio-operator", "version": "1.0.5"}}]}],
 "substitutions": [{"name": "{digest:hawtio-operator/1.1.1}", "base": "hawtio-operator.v1.0.0"}]}
`},
	// A base whose build metadata is not a valid release: without an olm.substitutesFor annotation it is
	// plain build metadata (ignored in the comparison), so the substitution is accepted.
	{name: "build-metadata-without-annotation", text: strings.Replace(substitutesHead, `version: "1.0.5"`, `version: "1.0.5+01"`, 1) + `substitutions:
- {name: "{digest:hawtio-operator/1.1.0}", base: hawtio-operator.v1.0.5}
`},
}

// TestSubstitutesMatchOPM renders substitutes templates with opm and with Render, in JSON and YAML, with
// and without the migration, and requires the same bytes.
func TestSubstitutesMatchOPM(t *testing.T) {
	opm := reftools.OPM(t)
	reg := newRegistry(t, "hawtio-operator/1.1.0", "hawtio-operator/1.1.1", "hawtio-operator/1.2.0")
	src := source(t)
	requireSameAsOPM(t, opm, reg, src, substitutesCases)
}

// substitutesError is a substitutes template opm refuses, and the template line catalogbot names.
type substitutesError struct {
	templateCase
	line int
	// validation tells that the message ends with a validation problem, worded by catalogbot's validator:
	// only the text up to it is opm's.
	validation string
}

var annotated = `  - type: olm.csv.metadata
    value: {annotations: {olm.substitutesFor: hawtio-operator.v1.0.0}, displayName: x}
`

var substitutesErrors = []substitutesError{
	{templateCase: templateCase{name: "duplicate-base", text: substitutesHead + `substitutions:
- {name: "{digest:hawtio-operator/1.1.0}", base: hawtio-operator.v1.0.5}
- {name: "{digest:hawtio-operator/1.2.0}", base: hawtio-operator.v1.0.5}
`}, line: 47},
	{templateCase: templateCase{name: "reused-name", text: substitutesHead + `substitutions:
- {name: "{digest:hawtio-operator/1.2.0}", base: hawtio-operator.v1.0.5}
- {name: "{digest:hawtio-operator/1.2.0}", base: hawtio-operator.v1.0.9}
`}, line: 47},
	{templateCase: templateCase{name: "empty-name", text: substitutesHead + `substitutions:
- {name: "", base: hawtio-operator.v1.0.5}
`}, line: 46},
	{templateCase: templateCase{name: "missing-base", text: substitutesHead + `substitutions:
- name: "{digest:hawtio-operator/1.2.0}"
`}, line: 46},
	{templateCase: templateCase{name: "name-is-base", text: substitutesHead + `substitutions:
- {name: hawtio-operator.v1.0.5, base: hawtio-operator.v1.0.5}
`}, line: 46},
	{templateCase: templateCase{name: "base-not-in-catalog", text: substitutesHead + `substitutions:
- name: "{digest:hawtio-operator/1.2.0}"
  base: hawtio-operator.v1.0.7
`}, line: 47},
	{templateCase: templateCase{name: "substitute-not-newer", text: strings.Replace(substitutesHead, `version: "1.0.9"`, `version: "1.2.0"`, 1) + `substitutions:
- name: "{digest:hawtio-operator/1.2.0}"
  base: hawtio-operator.v1.0.9
`}, line: 46},
	// With the annotation, the build metadata is the release, and "01" is not a valid one.
	{templateCase: templateCase{name: "legacy-release-invalid", text: substitutesHead[:strings.Index(substitutesHead, "- schema: olm.bundle")] +
		fbcBundle("1.0.0", "") + fbcBundle("1.0.5", "") + strings.Replace(fbcBundle("1.0.9", annotated), `version: "1.0.9"`, `version: "1.0.9+01"`, 1) + `substitutions:
- {name: "{digest:hawtio-operator/1.1.0}", base: hawtio-operator.v1.0.9}
`}, line: 48},
	{templateCase: templateCase{name: "unknown-field-type", text: "schema: olm.template.substitutes\nsubstitutions: {a: 1}\n"}, line: 1},
	{templateCase: templateCase{name: "wrong-schema-typed", typ: "substitutes", text: "schema: olm.template.basic\n"}, line: 1},
	{templateCase: templateCase{name: "entry-without-schema", text: "schema: olm.template.substitutes\nentries:\n- name: x\n"}, line: 3},
	{templateCase: templateCase{name: "invalid-entries-bundle-in-no-channel", text: strings.Replace(substitutesHead, "  - name: hawtio-operator.v1.0.0\n", "", 1)}, line: 2},
	{templateCase: templateCase{name: "invalid-entries-duplicate-entry", text: strings.Replace(substitutesHead, "  - name: hawtio-operator.v1.0.5\n  - name", "  - name: hawtio-operator.v1.0.5\n  - name: hawtio-operator.v1.0.5\n  - name", 1)}, line: 2},
	{templateCase: templateCase{name: "invalid-entries-channel-of-unknown-package", text: strings.Replace(substitutesHead, "  package: hawtio-operator\n  name: fast", "  package: hawtio\n  name: fast", 1)}, line: 2},
	{templateCase: templateCase{name: "invalid-entries-entry-without-bundle", text: strings.Replace(substitutesHead, "  - name: hawtio-operator.v1.0.5\n  - name", "  - name: hawtio-operator.v1.0.5\n  - name: hawtio-operator.v1.0.7\n  - name", 1)}, line: 2},
	{templateCase: templateCase{name: "invalid-entries-package-mismatch", text: strings.Replace(substitutesHead, "{packageName: hawtio-operator, version: \"1.0.9\"}", "{packageName: hawtio, version: \"1.0.9\"}", 1)}, line: 2},
	{templateCase: templateCase{name: "invalid-entries-bad-version", text: strings.Replace(substitutesHead, "version: \"1.0.9\"", "version: \"1.0\"", 1)}, line: 2},
	{templateCase: templateCase{name: "invalid-entries-two-heads", text: strings.Replace(substitutesHead, "    skips: [hawtio-operator.v1.0.5]\n", "", 1)}, line: 2,
		validation: "render: entries are not valid FBC: "},
	// The substitute's bundle is already in the package (in a channel of its own).
	{templateCase: templateCase{name: "result-invalid", text: substitutesHead + `- schema: olm.channel
  package: hawtio-operator
  name: preview
  entries: [{name: hawtio-operator.v1.1.0}]
` + fbcBundle("1.1.0", "") + `substitutions:
- {name: "{digest:hawtio-operator/1.1.0}", base: hawtio-operator.v1.0.5}
`}, line: 57},
}

// TestSubstitutesErrorsMatchOPM gives opm and Render bad substitutes templates: both refuse, with the same
// message (up to the validator's wording of an invalid catalog), and Render names the line.
func TestSubstitutesErrorsMatchOPM(t *testing.T) {
	opm := reftools.OPM(t)
	reg := newRegistry(t, "hawtio-operator/1.1.0", "hawtio-operator/1.1.1", "hawtio-operator/1.2.0")
	src := source(t)
	for _, c := range substitutesErrors {
		t.Run(c.name, func(t *testing.T) {
			data := c.render(reg)
			opts := Options{Type: c.typ}
			msg, te := bothRefuse(t, opm, src, data, opts)
			want := "rendering template: " + strings.ReplaceAll(c.validation, "{name}", reg.digest["hawtio-operator/1.1.0"])
			switch {
			case c.validation == "" && te.Msg != msg:
				t.Errorf("message differs:\nopm:  %q\nours: %q", msg, te.Msg)
			case c.validation != "" && (!strings.HasPrefix(msg, want) || !strings.HasPrefix(te.Msg, want) || te.Msg == want):
				t.Errorf("message differs:\nopm:  %q\nours: %q\nwant both to start with %q", msg, te.Msg, want)
			}
			if te.File != "template.yaml" || te.Line != c.line {
				t.Errorf("error at %s:%d, want template.yaml:%d (%s)", te.File, te.Line, c.line, te.Msg)
			}
		})
	}
}

// TestSubstitutesReproducedOffline renders substitutes templates online, seeds a fresh store from the
// written render (as from a committed catalog) and renders them again with no registry: the same bytes,
// so a substitute known only from the committed catalog compares its version-release as when pulled.
func TestSubstitutesReproducedOffline(t *testing.T) {
	reg := newRegistry(t, "hawtio-operator/1.1.0", "hawtio-operator/1.1.1", "hawtio-operator/1.2.0")
	online := source(t)
	for _, c := range substitutesCases {
		for _, level := range []string{"", MigrateCSVMetadata} {
			t.Run(c.name+"/"+level, func(t *testing.T) {
				data := c.render(reg)
				opts := Options{Type: c.typ, MigrateLevel: level}
				want, err := ours(t, online, data, opts, "yaml")
				if err != nil {
					t.Fatal(err)
				}
				res, err := catalog.LoadFS(context.Background(), fstest.MapFS{"catalog.yaml": {Data: want}}, catalog.LoadOptions{})
				if err != nil || diag.HasErrors(res.Diagnostics) {
					t.Fatalf("load the render: %v %v", err, res.Diagnostics)
				}
				store := NewStore("")
				if err := store.Seed(res.Catalog, false); err != nil {
					t.Fatal(err)
				}
				got, err := ours(t, &Images{Store: store, Offline: true}, data, opts, "yaml")
				if err != nil {
					t.Fatalf("offline: %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("offline render differs:\n--- online\n%s\n--- offline\n%s", want, got)
				}
			})
		}
	}
}

// pushLegacyBundle pushes hawtio-operator 1.1.0 changed to the legacy release scheme (version 1.1.0+2, an
// olm.substitutesFor annotation) as bundle "legacy" of reg.
func pushLegacyBundle(t *testing.T, reg *registry) {
	t.Helper()
	src := shareddata.Dir(t, "bundles", "hawtio-operator", "1.1.0")
	dir := t.TempDir()
	for _, sub := range []string{"manifests", "metadata"} {
		if err := os.CopyFS(filepath.Join(dir, sub), os.DirFS(filepath.Join(src, sub))); err != nil {
			t.Fatal(err)
		}
	}
	csvFile := filepath.Join(dir, "manifests", "hawtio-operator.clusterserviceversion.yaml")
	data, err := os.ReadFile(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	csv := strings.Replace(string(data), "    support: Red Hat\n", "    support: Red Hat\n    olm.substitutesFor: hawtio-operator.v1.0.9\n", 1)
	csv = strings.Replace(csv, "\n  version: 1.1.0\n", "\n  version: 1.1.0+2\n", 1)
	if strings.Count(csv, "olm.substitutesFor") != 1 || !strings.Contains(csv, "version: 1.1.0+2\n") {
		t.Fatal("the shared CSV changed: the legacy bundle could not be made")
	}
	if err := os.WriteFile(csvFile, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := bundleimage.Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	reg.push(t, "legacy", img, "bundles/hawtio-legacy", "v1.1.0-2")
}

// TestLegacyReleaseSubstituteMatchesOPM: a substitute of the same version as its base is newer only when
// its ClusterServiceVersion substitutes for another and its build metadata reads as a release (the CSV
// is not the bundle's first object); opm and Render agree, with and without the migration.
func TestLegacyReleaseSubstituteMatchesOPM(t *testing.T) {
	opm := reftools.OPM(t)
	reg := newRegistry(t, "hawtio-operator/1.1.0")
	pushLegacyBundle(t, reg)
	head := strings.Replace(substitutesHead, `version: "1.0.9"`, `version: "1.1.0"`, 1) + "substitutions:\n"
	accepted := head + "- {name: \"{digest:legacy}\", base: hawtio-operator.v1.0.9}\n"
	refused := head + "- {name: \"{digest:hawtio-operator/1.1.0}\", base: hawtio-operator.v1.0.9}\n"
	src := source(t)
	for _, level := range []string{"", MigrateCSVMetadata} {
		t.Run("accepted/"+level, func(t *testing.T) {
			data := templateCase{text: accepted}.render(reg)
			opts := Options{MigrateLevel: level}
			want, msg, ok := opmTemplate(t, opm, data, opts, "json")
			if !ok {
				t.Fatalf("opm failed: %s", msg)
			}
			got, err := ours(t, src, data, opts, "json")
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("differs from opm:\n--- opm\n%s\n--- ours\n%s", want, got)
			}
		})
		t.Run("refused/"+level, func(t *testing.T) {
			data := templateCase{text: refused}.render(reg)
			opts := Options{MigrateLevel: level}
			_, msg, ok := opmTemplate(t, opm, data, opts, "json")
			if ok {
				t.Fatal("opm accepted the template")
			}
			_, err := ours(t, src, data, opts, "json")
			var te *Error
			if !errors.As(err, &te) || te.Msg != msg || te.Line != 46 {
				t.Errorf("want opm's %q on line 46, got %v", msg, err)
			}
		})
	}
}
