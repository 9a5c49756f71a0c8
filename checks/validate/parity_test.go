package validate

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/internal/reftools"
)

// opmBinary returns the reference opm binary, or skips (fails under CATALOGBOT_REQUIRE_TOOLS=1) without it.
func opmBinary(t *testing.T) string {
	t.Helper()
	return reftools.OPM(t)
}

// opmVerdict runs `opm validate dir` and reports whether opm accepted the catalog, with its output.
func opmVerdict(ctx context.Context, t *testing.T, bin, dir string) (bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "validate", dir)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, string(out)
	case errors.As(err, &exit) && exit.ExitCode() > 0 && ctx.Err() == nil:
		return false, string(out)
	default:
		t.Fatalf("run %s validate %s: %v\n%s", bin, dir, err, out)
		return false, ""
	}
}

// ourVerdict runs catalogbot's validator on dir.
func ourVerdict(ctx context.Context, t *testing.T, dir string) (*Result, string) {
	t.Helper()
	res, err := Dir(ctx, dir, Options{})
	if err != nil {
		t.Fatalf("validate %s: %v", dir, err)
	}
	var b strings.Builder
	for _, d := range res.Diagnostics {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return res, b.String()
}

// compareVerdicts requires catalogbot to accept exactly what opm accepts in dir, and every error to be
// located; it returns opm's verdict.
func compareVerdicts(ctx context.Context, t *testing.T, bin, dir string) bool {
	t.Helper()
	opmOK, opmOut := opmVerdict(ctx, t, bin, dir)
	res, ours := ourVerdict(ctx, t, dir)
	if res.Valid() != opmOK {
		t.Errorf("verdicts differ on %s: opm accepts=%v, catalogbot accepts=%v\n--- opm:\n%s\n--- catalogbot:\n%s",
			dir, opmOK, res.Valid(), strings.TrimSpace(opmOut), ours)
	}
	if !res.Valid() {
		for _, d := range res.Diagnostics {
			// a file that cannot be read at all has no line to point at
			wholeFile := d.Rule == catalog.RuleFile || d.Rule == catalog.RuleTooLarge || d.Rule == catalog.RuleRefused
			if d.File == "" || (d.Line == 0 && !wholeFile) {
				t.Errorf("diagnostic without file and line: %s", d)
			}
		}
	}
	return opmOK
}

func TestParityWithOPM(t *testing.T) {
	bin := opmBinary(t)
	ctx := context.Background()
	t.Run("opm-cases", func(t *testing.T) {
		root := sharedData(t, "opm-cases")
		n := 0
		for _, verdict := range []string{"valid", "invalid"} {
			cases, err := os.ReadDir(filepath.Join(root, verdict))
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range cases {
				if !c.IsDir() {
					continue
				}
				n++
				dir := filepath.Join(root, verdict, c.Name(), "catalog")
				t.Run(verdict+"/"+c.Name(), func(t *testing.T) {
					t.Parallel()
					if got := compareVerdicts(ctx, t, bin, dir); got != (verdict == "valid") {
						t.Errorf("opm accepts=%v, but the case is filed under %s/", got, verdict)
					}
				})
			}
		}
		if n < 30 {
			t.Fatalf("found only %d opm cases under %s", n, root)
		}
	})
	for _, name := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20", "composed-279"} {
		t.Run(name, func(t *testing.T) {
			if name == "composed-279" && testing.Short() {
				t.Skip("composed-279 (82 MB) is skipped under -short")
			}
			t.Parallel()
			if !compareVerdicts(ctx, t, bin, sharedData(t, "catalogs", name)) {
				t.Errorf("opm rejects real catalog %s, which the data README says passes", name)
			}
		})
	}
}
