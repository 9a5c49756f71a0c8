package bundle

import (
	"bytes"
	"context"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
)

// TestToCSVMetadataMatchesRenderingMigrated migrates every real bundle rendered in the default form and
// requires the bundle rendered directly with CSVMetadata, byte for byte: the migration of a bundle taken
// from a committed catalog is the migration opm applies while rendering the image.
func TestToCSVMetadataMatchesRenderingMigrated(t *testing.T) {
	for rel, dir := range realBundles(t) {
		t.Run(rel, func(t *testing.T) {
			ctx := context.Background()
			plain, err := RenderDir(ctx, dir, "example.com/b:v1")
			if err != nil {
				t.Skipf("not renderable: %v", err)
			}
			want, err := Options{CSVMetadata: true}.RenderDir(ctx, dir, "example.com/b:v1")
			if err != nil {
				t.Fatal(err)
			}
			got, err := ToCSVMetadata(plain)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := mustMarshal(t, got), mustMarshal(t, want); !bytes.Equal(a, b) {
				t.Errorf("migrated bundle differs:\n%s", diffProperties(a, b))
			}
			if again, err := ToCSVMetadata(got); err != nil || again != got {
				t.Errorf("migrating a migrated bundle changed it (err %v)", err)
			}
			if csv, err := CSVOf(got); err != nil || csv != nil {
				t.Errorf("a migrated bundle still has a ClusterServiceVersion object (err %v)", err)
			}
		})
	}
}

// TestToCSVMetadataLeavesImagelessBundles follows opm: a bundle without an image is not migrated.
func TestToCSVMetadataLeavesImagelessBundles(t *testing.T) {
	for rel, dir := range realBundles(t) {
		plain, err := RenderDir(context.Background(), dir, "")
		if err != nil {
			continue
		}
		got, err := ToCSVMetadata(plain)
		if err != nil || got != plain {
			t.Fatalf("%s: bundle without image was changed (err %v)", rel, err)
		}
		return
	}
	t.Fatal("no renderable bundle")
}

func mustMarshal(t *testing.T, b *catalog.Bundle) []byte {
	t.Helper()
	data, err := Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
