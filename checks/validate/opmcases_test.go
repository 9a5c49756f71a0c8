package validate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// sharedData is a path in the project's real data (see internal/shareddata).
func sharedData(t testing.TB, elem ...string) string {
	t.Helper()
	return shareddata.Dir(t, elem...)
}

// expectedRule maps each invalid opm case to the rule catalogbot must report for it.
var expectedRule = map[string]string{
	"bundle-duplicate-version":          "bundle-duplicate-version",
	"bundle-image-bad-pullspec":         "bundle-image-bad-pullspec",
	"bundle-no-image-no-objects":        "bundle-no-image-no-objects",
	"bundle-not-in-any-channel":         "bundle-not-in-any-channel",
	"bundle-package-property-mismatch":  "bundle-package-property-mismatch",
	"bundle-two-package-properties":     "bundle-package-property-count",
	"bundle-version-not-semver":         "bundle-version-not-semver",
	"channel-duplicate-entry":           "channel-duplicate-entry",
	"channel-empty-entries":             "channel-empty-entries",
	"channel-multiple-heads":            "channel-multiple-heads",
	"channel-no-head-cycle":             "channel-no-head",
	"channel-stranded-bundle":           "channel-stranded-bundle",
	"default-channel-missing-field":     "default-channel-missing",
	"deprecation-bundle-not-found":      "deprecation-bundle-not-found",
	"deprecation-duplicate-entry":       "deprecation-duplicate-entry",
	"deprecation-missing-ref-schema":    "deprecation-missing-ref-schema",
	"deprecation-two-per-package":       "deprecation-two-per-package",
	"deprecation-unknown-ref-schema":    "deprecation-unknown-ref-schema",
	"non-fbc-file-in-dir":               "parse-missing-schema",
	"package-duplicate":                 "package-duplicate",
	"package-name-not-dns1123":          "package-name-not-dns1123",
	"package-no-default-no-channels":    "package-no-channels",
	"parse-channel-entries-wrong-type":  "parse-wrong-type",
	"parse-json-syntax-line5":           "parse-json-syntax",
	"parse-name-not-string":             "parse-name-not-string",
	"property-bundle-object-not-base64": "property-bundle-object-invalid",
	"property-wrong-type-gvk":           "property-invalid",
	"release-name-not-normalized":       "bundle-name-not-normalized",
	"skiprange-bad":                     "skiprange-bad",
}

func TestOPMCases(t *testing.T) {
	root := sharedData(t, "opm-cases")
	for _, verdict := range []string{"valid", "invalid"} {
		cases, err := os.ReadDir(filepath.Join(root, verdict))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			t.Run(verdict+"/"+c.Name(), func(t *testing.T) {
				res, err := Dir(context.Background(), filepath.Join(root, verdict, c.Name(), "catalog"), Options{})
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range res.Diagnostics {
					t.Log(d.String())
				}
				if verdict == "valid" {
					if !res.Valid() {
						t.Fatalf("opm accepts this catalog; catalogbot rejected it")
					}
					return
				}
				want, ok := expectedRule[c.Name()]
				if !ok {
					t.Fatalf("no expected rule for case %s: add it to expectedRule", c.Name())
				}
				if res.Valid() {
					t.Fatalf("opm rejects this catalog; catalogbot accepted it")
				}
				found := false
				for _, d := range res.Diagnostics {
					if d.File == "" || d.Line == 0 {
						t.Errorf("diagnostic without file:line: %s", d)
					}
					if strings.TrimSpace(d.Message) == "" {
						t.Errorf("diagnostic without message: %+v", d)
					}
					found = found || d.Rule == want
				}
				if !found {
					t.Errorf("no diagnostic with rule %s", want)
				}
			})
		}
	}
}
