package validate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// hostileCatalog writes n broken packages (no channels, a default channel that does not exist) on one line.
func hostileCatalog(t *testing.T, n int) string {
	dir := t.TempDir()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"schema":"olm.package","name":"pkg-%06d","defaultChannel":"x"}`, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The attack: a pull request adds one file with tens of thousands of broken packages, to make the bot hold
// and print every diagnostic. Each rule keeps its first diagnostics (in file order) and counts the rest;
// the verdict and the error count stay exact.
func TestAttackDiagnosticFlood(t *testing.T) {
	dir := hostileCatalog(t, 20000)
	res, err := Dir(context.Background(), dir, Options{Limits: Limits{MaxPerRule: 25}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 50 {
		t.Fatalf("kept %d diagnostics, want 25 per rule for 2 rules", len(res.Diagnostics))
	}
	if res.Diagnostics[0].Package != "pkg-000000" || res.Diagnostics[49].Package != "pkg-000024" {
		t.Fatalf("want the first packages of the file kept, got %s .. %s", res.Diagnostics[0], res.Diagnostics[49])
	}
	want := []diag.Truncation{{Check: Check, Rule: "default-channel-not-found", Severity: diag.Error, Count: 19975},
		{Check: Check, Rule: "package-no-channels", Severity: diag.Error, Count: 19975}}
	if fmt.Sprint(res.Truncated) != fmt.Sprint(want) {
		t.Fatalf("truncated %v, want %v", res.Truncated, want)
	}
	if res.Valid() || !strings.HasSuffix(res.Summary(), ": 40000 errors") {
		t.Fatalf("summary %q (valid %v): the count must include what was dropped", res.Summary(), res.Valid())
	}
	all, err := Dir(context.Background(), dir, Options{Limits: Limits{MaxPerRule: -1}})
	if err != nil || len(all.Diagnostics) != 40000 || len(all.Truncated) != 0 {
		t.Fatalf("MaxPerRule -1 keeps everything: %v, %d kept, %v truncated", err, len(all.Diagnostics), all.Truncated)
	}
}

// Limits reach the loader: a file over MaxFileBytes or a catalog over MaxTotalBytes is one clear diagnostic
// naming the file and the limit, and no rule runs on a catalog that was not read.
func TestLimitsReachTheLoader(t *testing.T) {
	dir := hostileCatalog(t, 100) // 6,500 bytes
	res, err := Dir(context.Background(), dir, Options{Limits: Limits{MaxFileBytes: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Rule != catalog.RuleTooLarge || !strings.Contains(res.Diagnostics[0].Message, "limit of 1000 bytes") {
		t.Fatalf("want one %s naming the limit, got %v", catalog.RuleTooLarge, res.Diagnostics)
	}
	res, err = Dir(context.Background(), dir, Options{Limits: Limits{MaxTotalBytes: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Rule != catalog.RuleCatalogTooLarge || res.Diagnostics[0].File != "catalog.json" {
		t.Fatalf("want one %s on catalog.json, got %v", catalog.RuleCatalogTooLarge, res.Diagnostics)
	}
}
