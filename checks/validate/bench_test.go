package validate

import (
	"context"
	"testing"
)

// BenchmarkValidateComposed validates the 82 MB, 5,374-bundle composed-279 catalog (bench/validate.sh
// compares the CLI with opm side by side).
func BenchmarkValidateComposed(b *testing.B) {
	dir := sharedData(b, "catalogs", "composed-279")
	for b.Loop() {
		res, err := Dir(context.Background(), dir, Options{})
		if err != nil || !res.Valid() {
			b.Fatalf("%v %v", err, res.Diagnostics)
		}
	}
}

// BenchmarkValidateOnePackage is the pre-commit path: one changed package directory of composed-279.
func BenchmarkValidateOnePackage(b *testing.B) {
	dir := sharedData(b, "catalogs", "composed-279")
	for b.Loop() {
		res, fellBack, err := Changed(context.Background(), dir, []string{"etcd/catalog.json"}, Limits{})
		if err != nil || fellBack || !res.Valid() || len(res.Catalog.Packages) != 1 {
			b.Fatalf("%v %v %v", err, fellBack, res)
		}
	}
}
