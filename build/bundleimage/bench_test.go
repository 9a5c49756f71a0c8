package bundleimage

import "testing"

// BenchmarkBuild measures building the image of the repository's upstream bundle fixture (nine files in
// the image, 91 KB), the layer's compressed size reported.
func BenchmarkBuild(b *testing.B) {
	var size int64
	for b.Loop() {
		img, err := Build(b.Context(), fixture)
		if err != nil {
			b.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			b.Fatal(err)
		}
		if size, err = layers[0].Size(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(size), "gz-bytes")
}
