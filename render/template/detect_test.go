package template

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// detectOffline runs Detect on root's catalogs, named as given, in order.
func detectOffline(t *testing.T, root string, names ...string) *Detection {
	t.Helper()
	var cats []Catalog
	for _, n := range names {
		cats = append(cats, Catalog{Name: n, Dir: "catalogs/" + n})
	}
	d, err := Detect(context.Background(), root, cats)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDetectPerPackageOPM: of three real packages of community-operators-prod's v4.20 catalog, rendered
// upstream by different opm releases, Detect finds the opm each reproduces with (clusterpulse only with
// v1.46.0, kairos-operator and konflux with v1.73.0, the repository's default then), the package the
// konflux directory holds, and the migration of both catalogs; under those settings every mapping
// reproduces its committed file byte for byte.
func TestDetectPerPackageOPM(t *testing.T) {
	root := shareddata.UpstreamCheckout(t)
	d := detectOffline(t, root, "v4.20", "v4.21")
	if d.OPMVersion != OPMv1_73_0 || d.MigrateLevel != MigrateCSVMetadata || d.MigrateFrom != "" {
		t.Errorf("opm %s, migrate %q from %q; want v1.73.0, %s from every catalog", d.OPMVersion, d.MigrateLevel, d.MigrateFrom, MigrateCSVMetadata)
	}
	want := map[string]config.CatalogPackage{"clusterpulse": {OPMVersion: "v1.46.0"}, "konflux": {Package: "konflux-operator"}}
	if fmt.Sprint(d.Packages) != fmt.Sprint(want) {
		t.Errorf("packages %v, want %v", d.Packages, want)
	}
	if len(d.Outcomes) != 6 {
		t.Fatalf("%d outcomes, want 3 packages x 2 catalogs", len(d.Outcomes))
	}
	for _, o := range d.Outcomes {
		if !o.Reproduced {
			t.Errorf("%s (opm %s) does not reproduce: %v", o.Job.Output(), o.Job.OPMVersion, o.Err)
		}
	}
}

// TestDetectCommunityTemplates: on the 22 packages of the shared template repository Detect finds
// upstream's render settings (olm.csv.metadata from v4.17 on, opm v1.73.0 for most packages) and
// reproduces the 103 mappings that are in sync; the 17 it does not are the ones known to be out of sync
// upstream, each with its reason (a drift or a bundle no committed catalog holds).
func TestDetectCommunityTemplates(t *testing.T) {
	root := shareddata.Dir(t, "fbc-templates")
	var names []string
	for y := 12; y <= 22; y++ {
		names = append(names, fmt.Sprintf("v4.%d", y))
	}
	d := detectOffline(t, root, names...)
	if d.MigrateLevel != MigrateCSVMetadata || d.MigrateFrom != "v4.17" || d.OPMVersion != OPMv1_73_0 {
		t.Errorf("migrate %q from %q, opm %s; want %s from v4.17, v1.73.0", d.MigrateLevel, d.MigrateFrom, d.OPMVersion, MigrateCSVMetadata)
	}
	reproduced := 0
	for _, o := range d.Outcomes {
		out := o.Job.Output()
		switch {
		case o.Reproduced:
			reproduced++
			if knownOutOfSync[out] != "" || templateAhead[out] {
				t.Errorf("%s reproduced, but it is known to be out of sync", out)
			}
		case templateAhead[out]:
			if o.Err == nil || !strings.Contains(o.Err.Error(), "not in the bundle cache") {
				t.Errorf("%s: %v, want not cached", out, o.Err)
			}
		case knownOutOfSync[out] == "":
			t.Errorf("%s does not reproduce: %v", out, o.Err)
		default: // drift: says what re-rendering would change, except for a file that only differs in form
			why := DescribeDrift(context.Background(), o.Committed, o.Rendered)
			if hand := strings.Contains(out, "kubebrowser"); hand != (why == "") {
				t.Errorf("%s: what re-rendering changes: %q", out, why)
			}
			if strings.Contains(out, "openshift-integration") && why != "re-rendering changes the upgrade edges (replaces, skips, skipRange) of released 1 entry (openshift-integration-operator.v0.8.2 in candidate-v0)" {
				t.Errorf("%s: %q", out, why)
			}
		}
	}
	if reproduced != 103 || len(d.Outcomes) != 120 {
		t.Errorf("%d of %d mappings reproduced, want 103 of 120", reproduced, len(d.Outcomes))
	}
}

// A bundle not in the cache is "render without --offline" only when the render was asked to pull
// nothing; a render that has no registry access for another reason (a gate given no puller) says the
// bundle must be pulled, and does not point at a flag the run did not use.
func TestNotCachedHintNamesOfflineOnlyWhenOffline(t *testing.T) {
	tmpl := []byte("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: quay.io/example/b@sha256:" + strings.Repeat("a", 64) + "\n")
	for _, offline := range []bool{true, false} {
		_, err := Render(context.Background(), tmpl, "operators/b/catalog-templates/t.yaml", &Images{Store: NewStore(""), Offline: offline}, Options{})
		results := []Result{{Job: Job{Package: "b", Dir: "b", CI: "operators/b/ci.yaml", Catalog: Catalog{Name: "v4.20", Dir: "catalogs/v4.20"}}, Err: err}}
		ds := Diagnostics(t.TempDir(), results, true)
		if len(ds) != 1 || ds[0].Rule != "template-not-cached" || strings.Contains(ds[0].Hint, "--offline") != offline || strings.Contains(ds[0].Message, "(offline)") != offline {
			t.Errorf("offline %v: %+v", offline, ds)
		}
	}
}
