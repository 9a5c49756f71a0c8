package template

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// A registry that cannot be reached during a render is the infrastructure's failure, not the author's:
// its diagnostic is registry-unavailable (which fails nothing on its own) and InfraErr makes the stage an
// error (exit 3), as reference renders, check-images and the images stage do; a wrong template stays a
// failure.
func TestUnreachableRegistryIsInfra(t *testing.T) {
	img := "127.0.0.1:1/gone/bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	text := "schema: olm.semver\nstable:\n  bundles:\n  - image: " + img + "\n"
	_, err := Render(context.Background(), []byte(text), "operators/x/catalog-templates/t.yaml", source(t), Options{})
	job := Job{Package: "x", CI: "operators/x/ci.yaml", Catalog: Catalog{Name: "v4.16", Dir: "catalogs/v4.16"}}
	results := []Result{{Job: job, Err: err}}
	ds := Diagnostics(t.TempDir(), results, false)
	if len(ds) != 1 || !ds[0].IsInfra() || ds[0].Line != 4 || !strings.Contains(ds[0].Message, img) || ds[0].Hint == "" {
		t.Fatalf("want one registry-unavailable diagnostic on line 4 naming the image: %+v", ds)
	}
	if got := InfraErr(results); diag.CategoryOf(got) != diag.Infra || !strings.Contains(got.Error(), "not a problem of the change") {
		t.Errorf("InfraErr = %v (category %v), want an infrastructure error", got, diag.CategoryOf(got))
	}
	bad := []Result{{Job: job, Err: &Error{File: "t.yaml", Line: 2, Msg: "unknown field", Err: errors.New("x")}}}
	if ds := Diagnostics(t.TempDir(), bad, false); len(ds) != 1 || ds[0].IsInfra() || InfraErr(bad) != nil {
		t.Errorf("a wrong template must stay the author's: %+v", ds)
	}
}
