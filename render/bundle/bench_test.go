package bundle

import (
	"context"
	"testing"
)

// BenchmarkRenderRealBundles renders all the real bundles of the shared data once per iteration.
func BenchmarkRenderRealBundles(b *testing.B) {
	dirs := realBundles(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, dir := range dirs {
			if _, err := RenderDir(context.Background(), dir, ""); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(dirs)), "bundles/op")
}
