package template

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/internal/reftools"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// typed is c with its TYPE argument set from its schema: opm v1.46.0 has one sub-command per type and no
// detection.
func typed(t *testing.T, c templateCase, reg *registry) templateCase {
	t.Helper()
	if c.typ != "" {
		return c
	}
	schema, err := detectSchema(c.render(reg))
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	c.typ = strings.TrimPrefix(strings.TrimPrefix(schema, "olm.template."), "olm.")
	return c
}

// TestRenderMatchesOPMv1_46_0 holds the v1.46.0 rendering (catalogs.opmVersion: v1.46.0) to the real opm
// v1.46.0 on every render case, in JSON and YAML (and mermaid, which v1.46.0 draws for semver only), with
// and without the migration.
func TestRenderMatchesOPMv1_46_0(t *testing.T) {
	opm := reftools.OPMv1_46_0(t)
	reg := newRegistry(t, differentialBundles...)
	src := source(t)
	for _, c := range renderCases {
		c = typed(t, c, reg)
		formats := []string{"json", "yaml"}
		if c.typ == "semver" {
			formats = append(formats, "mermaid")
		}
		for _, format := range formats {
			for _, level := range []string{"", MigrateCSVMetadata} {
				t.Run(fmt.Sprintf("%s/%s/%s", c.name, format, level), func(t *testing.T) {
					data := c.render(reg)
					opts := Options{Type: c.typ, MigrateLevel: level, OPMVersion: OPMv1_46_0}
					want, msg, ok := opmTemplate(t, opm, data, opts, format)
					if !ok {
						t.Fatalf("opm v1.46.0 failed: %s", msg)
					}
					got, err := ours(t, src, data, opts, format)
					if err != nil {
						t.Fatalf("Render: %v", err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("differs from opm v1.46.0:\n--- opm\n%s\n--- ours\n%s", want, got)
					}
				})
			}
		}
	}
}

// TestErrorsMatchOPMv1_46_0: what opm v1.46.0 refuses, the v1.46.0 rendering refuses, with a template
// error (messages are v1.73.0's, on a line of the template; v1.46.0 only logs them).
func TestErrorsMatchOPMv1_46_0(t *testing.T) {
	opm := reftools.OPMv1_46_0(t)
	reg := newRegistry(t, "etcd/0.9.4", "cockroachdb/5.0.4")
	src := source(t)
	for _, c := range errorCases {
		if c.typ == "fancy" {
			continue // v1.46.0 has no TYPE argument: an unknown sub-command is cobra's, not a template's
		}
		if _, err := detectSchema(c.render(reg)); err != nil && c.typ == "" {
			continue // v1.46.0 cannot be asked without a type
		}
		c = typed(t, c, reg)
		if c.typ == "substitutes" || strings.Contains(c.typ, ".") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			opts := Options{Type: c.typ, OPMVersion: OPMv1_46_0}
			if c.name == "unknown-migrate-level" {
				opts.MigrateLevel = "bundle-object-to-everything"
			}
			bothRefuse(t, opm, src, c.render(reg), opts)
		})
	}
}

// The catalogs that differ from their template's v1.73.0 render only because upstream's opm links
// semver channels the older way.
var pinnedV1_46_0 = []string{
	"catalogs/v4.19/openshift-integration-operator/catalog.yaml",
	"catalogs/v4.20/openshift-integration-operator/catalog.yaml",
	"catalogs/v4.21/openshift-integration-operator/catalog.yaml",
	"catalogs/v4.22/openshift-integration-operator/catalog.yaml",
}

// TestPinnedOPMReproducesCommittedChannels renders the shared template repository offline with each
// supported opm: under v1.46.0, the semver package whose committed catalogs v1.73.0 cannot reproduce
// gets its committed channels and bundles byte for byte (every blob after the package blob), and under
// v1.73.0 it does not. The package blob is compared apart: opm v1.46.0 writes no icon or description,
// and the committed ones carry both, so no real opm of the two writes those files whole.
func TestPinnedOPMReproducesCommittedChannels(t *testing.T) {
	root := shareddata.Dir(t, "fbc-templates")
	ctx := context.Background()
	for _, v := range OPMVersions {
		t.Run(string(v), func(t *testing.T) {
			cats := communityCatalogs()
			for i := range cats {
				cats[i].OPMVersion = v
			}
			jobs, _, err := Plan(root, cats, "openshift-integration-operator")
			if err != nil {
				t.Fatal(err)
			}
			store := NewStore("")
			if err := SeedFromCommitted(ctx, store, root, cats, jobs); err != nil {
				t.Fatal(err)
			}
			src := &Images{Store: store, Offline: true}
			var same []string
			for _, j := range jobs {
				got, err := j.Render(ctx, root, src)
				if err != nil {
					t.Fatalf("%s: %v", j.Output(), err)
				}
				want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(j.Output())))
				if err != nil {
					t.Fatal(err)
				}
				gotPkg, gotRest, _ := bytes.Cut(got, []byte("\n---\n"))
				wantPkg, wantRest, _ := bytes.Cut(want, []byte("\n---\n"))
				if bytes.Equal(gotRest, wantRest) {
					same = append(same, j.Output())
				}
				if v == OPMv1_46_0 && bytes.Contains(gotPkg, []byte("icon:")) {
					t.Errorf("%s: v1.46.0 wrote the package icon", j.Output())
				}
				if v == OPMv1_73_0 && !bytes.Equal(gotPkg, wantPkg) {
					t.Errorf("%s: v1.73.0's package blob differs from the committed one", j.Output())
				}
			}
			want := pinnedV1_46_0
			if v == OPMv1_73_0 {
				want = nil
			}
			if !slices.Equal(same, want) {
				t.Errorf("channels and bundles reproduce for %q, want %q", same, want)
			}
		})
	}
}

// The configuration and the renderer support the same opm releases, and a release outside them is refused.
func TestOPMVersionsAgree(t *testing.T) {
	var ours []string
	for _, v := range OPMVersions {
		ours = append(ours, string(v))
	}
	if !slices.Equal(ours, config.OPMVersions) {
		t.Errorf("render/template reproduces %q, config accepts %q", ours, config.OPMVersions)
	}
	_, err := Render(context.Background(), []byte("schema: olm.semver\n"), "t.yaml", nil, Options{OPMVersion: "v1.50.0"})
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "v1.46.0, v1.73.0") {
		t.Errorf("an unsupported opm version: %v", err)
	}
}
