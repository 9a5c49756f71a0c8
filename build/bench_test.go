package build

import (
	"os"
	"testing"
	"time"
)

// BenchmarkCatalogLayer measures the layer of the real community-operators-prod v4.16 catalog (20 MB).
func BenchmarkCatalogLayer(b *testing.B) {
	dir := "/work/shared/data/catalogs/community-operators-prod-v4.16"
	if _, err := os.Stat(dir); err != nil {
		b.Skipf("SKIPPED: NO CATALOG AT %s", dir)
	}
	var size int
	for b.Loop() {
		gz, err := CatalogLayer(b.Context(), dir, time.Unix(0, 0))
		if err != nil {
			b.Fatal(err)
		}
		size = len(gz)
	}
	b.ReportMetric(float64(size), "gz-bytes")
}
