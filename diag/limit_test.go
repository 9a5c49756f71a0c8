package diag

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func ruleDiags(rule string, n int) []Diagnostic {
	ds := make([]Diagnostic, n)
	for i := range ds {
		ds[i] = Diagnostic{Severity: Error, Check: "validate", Rule: rule, File: "catalog.json", Line: 1, Column: 1 + 65*i,
			Package: fmt.Sprintf("pkg-%06d", i), Message: fmt.Sprintf("package %q has no channels", fmt.Sprintf("pkg-%06d", i))}
	}
	return ds
}

// A hostile catalog with a million broken packages must not make a run hold a million diagnostics: the
// limiter keeps the first Max of each rule (in report order, whatever order they arrive in, from however
// many goroutines) and counts the rest.
func TestLimiterKeepsFirstPerRuleInAnyArrivalOrder(t *testing.T) {
	a, b := ruleDiags("package-no-channels", 5000), ruleDiags("default-channel-not-found", 300)
	want := append(Sort(slices.Clone(a))[:10], Sort(slices.Clone(b))[:10]...)
	want = Sort(want)
	for seed := range uint64(5) {
		all := append(slices.Clone(a), b...)
		r := rand.New(rand.NewPCG(seed, seed))
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		l := NewLimiter(10)
		var wg sync.WaitGroup
		for w := range 4 { // four producers, as the loader's workers
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; i < len(all); i += 4 {
					l.Add(all[i])
				}
			}()
		}
		wg.Wait()
		if got := l.Diagnostics(); !slices.Equal(got, want) {
			t.Fatalf("seed %d: kept\n%v\nwant\n%v", seed, got, want)
		}
		wantTrunc := []Truncation{{"validate", "default-channel-not-found", Error, 290}, {"validate", "package-no-channels", Error, 4990}}
		if got := l.Truncated(); !slices.Equal(got, wantTrunc) {
			t.Fatalf("seed %d: truncated %v, want %v", seed, got, wantTrunc)
		}
		if n := TruncatedCount(l.Truncated(), Error); n != 5280 {
			t.Fatalf("TruncatedCount = %d, want 5280", n)
		}
	}
}

func TestLimiterUnlimitedAndFilter(t *testing.T) {
	l := NewLimiter(0)
	l.AddAll(ruleDiags("r", 1000))
	if len(l.Diagnostics()) != 1000 || len(l.Truncated()) != 0 {
		t.Fatalf("unlimited limiter kept %d, truncated %v", len(l.Diagnostics()), l.Truncated())
	}
	f := NewLimiter(1)
	f.Filter(func(d Diagnostic) bool { return d.Package == "pkg-000007" })
	f.AddAll(ruleDiags("r", 1000))
	if got := f.Diagnostics(); len(got) != 1 || got[0].Package != "pkg-000007" || len(f.Truncated()) != 0 {
		t.Fatalf("filtered limiter: kept %v, truncated %v (filtered-out diagnostics must neither be kept nor counted)", got, f.Truncated())
	}
}
