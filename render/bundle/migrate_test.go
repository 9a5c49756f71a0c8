package bundle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// TestRelatedImagesOrderMatchesOPM: with more than 12 related images and repeated images, the order of
// the equal ones is whatever opm's unstable sort leaves; Render must leave the same.
func TestRelatedImagesOrderMatchesOPM(t *testing.T) {
	opm := opmTool(t)
	dir := writeBundle(t, variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  - name: operand\n    image: quay.io/demo/operand:v1\n", manyRelatedImages())}))
	m := modes[1]
	want, ok := runOPM(t, opm, dir, m)
	if !ok {
		t.Fatalf("opm failed: %s", want)
	}
	got, err := renderMode(t, dir, m)
	if err != nil {
		t.Fatal(err)
	}
	related := func(data []byte) string {
		var b struct {
			RelatedImages []catalog.RelatedImage `json:"relatedImages"`
		}
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(b.RelatedImages)
	}
	if a, b := related(want), related(got); a != b {
		t.Errorf("related images in another order:\nopm:  %s\nours: %s", a, b)
	}
}
