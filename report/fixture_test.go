package report_test

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/diag"
	goldenpkg "github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// sample is a report with every stage status, located and unlocated diagnostics of each severity, hints,
// details, outputs, and text that each renderer must escape (%, CR/LF, ':' and ',' in properties, '<',
// '|'). Its stages' diagnostics are unsorted on purpose: renderers that sort must do it themselves.
func sample() *report.Report {
	return &report.Report{
		Title: "pull request example/catalog#12 at 0123456789ab",
		Stages: []report.Stage{
			{Name: "owners", Status: report.Fail, Duration: 1234567 * time.Nanosecond,
				Summary: "1 of 2 touched packages/paths not permitted for mallory",
				Diagnostics: []diag.Diagnostic{
					{Severity: diag.Error, Check: "owners", Rule: "owners-not-owner", File: "catalog/etcd/catalog.json", Package: "etcd",
						Message: "mallory is not an owner of package etcd", Hint: "an approving review by one of these permits it: alice, org/etcd-team"},
				}},
			{Name: "render", Status: report.Skipped, Summary: "no references config (references.file in .catalogbot.yaml)"},
			{Name: "validate", Status: report.Fail, Duration: 1500 * time.Millisecond,
				Summary: "2 files, 2 packages | 3 channels,\n5 bundles: 2 errors",
				Diagnostics: []diag.Diagnostic{
					{Severity: diag.Warning, Check: "validate", Rule: "package-no-icon", File: "catalog/etcd/catalog.json", Line: 1, Column: 1, Package: "etcd",
						Message: "package \"etcd\" has no icon"},
					{Severity: diag.Error, Check: "validate", Rule: "channel-multiple-heads", File: "catalog/etcd/catalog.json", Line: 40, Column: 3, Package: "etcd", Channel: "alpha",
						Message: "channel \"alpha\" has 2 heads: etcd.v0.9.2, etcd.v0.9.4", Hint: "make the newest bundle replace the other heads"},
					{Severity: diag.Error, Check: "validate", Rule: "bundle-image-bad-pullspec", File: "catalog/odd, name: 100%/catalog.json", Line: 7, Package: "odd",
						Message: "bundle \"odd.v1\": image \"quay.io/x/y:<tag>\" is not valid: 50% of it is wrong,\r\nsee line 2"},
				}},
			{Name: "graph", Status: report.Pass, Duration: 2 * time.Millisecond, Summary: "1 changed channels in 1 packages",
				Details: "#### etcd / alpha\n\n- head: `etcd.v0.9.2` → `etcd.v0.9.4`\n"},
			{Name: "images", Status: report.Error, Duration: 2*time.Minute + 3*time.Second,
				Summary: "3 image references of 2 new or changed bundles",
				Err:     "checking images: registry quay.io: 2 image(s) not verified: HTTP 503 Service Unavailable",
				Diagnostics: []diag.Diagnostic{
					{Severity: diag.Error, Check: "images", Rule: "registry-unavailable", File: "catalog/etcd/catalog.json", Line: 52, Package: "etcd", Bundle: "etcd.v0.9.4",
						Message: "cannot verify image quay.io/coreos/etcd-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2 (image): registry quay.io is unavailable: HTTP 503",
						Hint:    "not a problem with the catalog: retry when the registry is back"},
					{Severity: diag.Note, Check: "images", Message: "2 related images are the bundle image itself"},
				}},
			{Name: "config", Status: report.ActionRequired, Err: ".catalogbot.yaml: invalid configuration (1 errors)",
				Summary: ".catalogbot.yaml on the base branch is invalid: fix it there first"},
			{Name: "smoke", Status: report.Skipped, Summary: "smoke install is disabled (smoke.enabled in .catalogbot.yaml)"},
		},
		Outputs: map[string]string{"head_sha": "0123456789abcdef0123456789abcdef01234567", "catalog_digest": "sha256:00ff"},
	}
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	goldenpkg.Compare(t, filepath.Join("testdata", name), got, *update)
}
