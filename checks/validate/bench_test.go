package validate

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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

// BenchmarkValidateYAML validates the two community-operators-prod catalogs (YAML, one file per package);
// with -cpuprofile/-memprofile it gives the profile per phase (read, YAML to JSON, scan, decode, rules).
func BenchmarkValidateYAML(b *testing.B) {
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20"} {
		b.Run(name, func(b *testing.B) {
			dir := sharedData(b, "catalogs", name)
			for b.Loop() {
				res, err := Dir(context.Background(), dir, Options{})
				if err != nil || !res.Valid() {
					b.Fatalf("%v %v", err, res.Diagnostics)
				}
			}
		})
	}
}

// BenchmarkValidateDir validates the catalog directory CATALOGBOT_BENCH_CATALOG names (skipped without it):
// the profile of a real catalog outside the shared data, such as one of community-operators-prod's
// catalogs/v4.x at another commit, without copying it into the repository.
func BenchmarkValidateDir(b *testing.B) {
	dir := os.Getenv("CATALOGBOT_BENCH_CATALOG")
	if dir == "" {
		b.Skip("CATALOGBOT_BENCH_CATALOG names no catalog directory")
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Dir(context.Background(), dir, Options{})
		if err != nil || !res.Valid() {
			b.Fatalf("%v %v", err, res.Diagnostics)
		}
	}
}

// BenchmarkValidateOnePackage is the pre-commit path: one changed package of composed-279 (its file as it
// is, before and after), selected by package identity among all the catalog's files, reading every file
// (no select cache: the first run in a repository).
func BenchmarkValidateOnePackage(b *testing.B) {
	benchOnePackage(b, nil)
}

// BenchmarkValidateOnePackageCached is BenchmarkValidateOnePackage with a warm select cache (every run
// after the first): only the changed file is read.
func BenchmarkValidateOnePackageCached(b *testing.B) {
	benchOnePackage(b, &SelectCache{File: filepath.Join(b.TempDir(), "select"), Key: make([]byte, 32)})
}

func benchOnePackage(b *testing.B, cache *SelectCache) {
	dir := sharedData(b, "catalogs", "composed-279")
	old, err := os.ReadFile(filepath.Join(dir, "etcd", "catalog.json"))
	if err != nil {
		b.Fatal(err)
	}
	before := func(string) ([]byte, bool, error) { return old, true, nil }
	ch := Change{Files: []string{"etcd/catalog.json"}, Before: before, Cache: cache}
	if cache != nil { // warm it
		if _, _, err := Changed(context.Background(), dir, ch); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time per run, next to ns/op: on a shared machine the wall time is mostly waiting for a core.
	var start syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &start)
	defer func() {
		var end syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &end)
		cpu := time.Duration(end.Utime.Nano() + end.Stime.Nano() - start.Utime.Nano() - start.Stime.Nano())
		b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	}()
	for b.Loop() {
		res, fellBack, err := Changed(context.Background(), dir, ch)
		if err != nil || fellBack || !res.Valid() || len(res.Files) > 10 {
			b.Fatalf("%v %v %v", err, fellBack, res)
		}
	}
}
