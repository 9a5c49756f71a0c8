package build

import (
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// BenchmarkCatalogLayer measures the layer of the real community-operators-prod v4.16 catalog (20 MB).
func BenchmarkCatalogLayer(b *testing.B) {
	dir := shareddata.Dir(b, "catalogs", "community-operators-prod-v4.16")
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
