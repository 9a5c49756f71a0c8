package catalog

import (
	"context"
	"os"
	"reflect"
	"strings"
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

// loadRealBothWays loads each named shared catalog twice, lean, with load(dir, true) and load(dir, false),
// and fails the test when the catalogs or the diagnostics differ; what names the first way in messages.
func loadRealBothWays(t *testing.T, names []string, what string, load func(dir string, on bool) (*Result, error)) {
	if os.Getenv("CATALOGBOT_SHARED_DATA") == "" {
		t.Skip("CATALOGBOT_SHARED_DATA is not set")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			dir := sharedData(t, "catalogs", name)
			var res [2]*Result
			for k, on := range []bool{true, false} {
				var err error
				if res[k], err = load(dir, on); err != nil {
					t.Fatal(err)
				}
			}
			if len(res[0].Catalog.Bundles) == 0 || !reflect.DeepEqual(res[0].Catalog, res[1].Catalog) {
				t.Errorf("the catalog differs %s (%d bundles)", what, len(res[0].Catalog.Bundles))
			}
			if got, want := strings.Join(diagStrings(res[0].Diagnostics), "\n"), strings.Join(diagStrings(res[1].Diagnostics), "\n"); got != want {
				t.Errorf("diagnostics differ:\n%s\n%s\nthe other way\n%s", what, got, want)
			}
		})
	}
}
