package catalog

import (
	"context"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// sharedData is a path in the project's real data (see internal/shareddata).
func sharedData(t testing.TB, elem ...string) string {
	t.Helper()
	return shareddata.Dir(t, elem...)
}

func TestLoadRealCatalogs(t *testing.T) {
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20", "composed-279"} {
		t.Run(name, func(t *testing.T) {
			for _, lean := range []bool{false, true} {
				res, err := LoadDir(context.Background(), sharedData(t, "catalogs", name), LoadOptions{Lean: lean})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range res.Diagnostics {
					t.Errorf("unexpected diagnostic: %s", d)
				}
				c := res.Catalog
				if len(c.Packages) == 0 || len(c.Channels) == 0 || len(c.Bundles) == 0 {
					t.Fatalf("loaded %d packages, %d channels, %d bundles", len(c.Packages), len(c.Channels), len(c.Bundles))
				}
				for _, b := range c.Bundles {
					if b.Pos.File == "" || b.Pos.Line == 0 || b.Parsed == nil {
						t.Fatalf("bundle %s has no position or parsed properties: %+v", b.Name, b.Pos)
					}
				}
				t.Logf("lean=%v: %d packages, %d channels, %d bundles, %d deprecations, %d others", lean,
					len(c.Packages), len(c.Channels), len(c.Bundles), len(c.Deprecations), len(c.Others))
			}
		})
	}
}

func BenchmarkLoadComposed(b *testing.B) {
	dir := sharedData(b, "catalogs", "composed-279")
	for b.Loop() {
		if _, err := LoadDir(context.Background(), dir, LoadOptions{Lean: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadYAMLCatalogs loads the community-operators-prod catalogs (YAML; v4.16's bundles carry inline
// olm.bundle.object CSVs and CRDs) as validate does.
func BenchmarkLoadYAMLCatalogs(b *testing.B) {
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20"} {
		b.Run(name, func(b *testing.B) {
			dir := sharedData(b, "catalogs", name)
			for b.Loop() {
				if _, err := LoadDir(context.Background(), dir, LoadOptions{Lean: true}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
