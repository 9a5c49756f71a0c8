package smoke

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

const testBaseDigest = "catalogbot.local/smoke/catalog@sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

func TestRunUpgradesFromTheBaseCatalog(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{
		"good": {versions: []string{"good.v1", "good.v2"}, inBase: 1},
		"new":  {versions: []string{"new.v1"}},
	})
	f.baseImage = testBaseDigest
	b := &fakeBackend{exists: true}
	res, err, progress := runFake(t, f, b, Options{ClusterName: "dev", CatalogImage: testDigest, CatalogArchive: "/tmp/head.tar",
		BaseCatalogImage: testBaseDigest, BaseCatalogArchive: "/tmp/base.tar", FromBase: []string{"good"},
		Expect: map[string]string{"good": "good.v2", "new": "new.v1"}, Packages: []string{"good", "new"}, Timeout: 5 * time.Second, Keep: true})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	if calls := b.Calls(); !slices.Contains(calls, "load /tmp/base.tar") || !slices.Contains(calls, "load /tmp/head.tar") {
		t.Errorf("archives loaded: %q", calls)
	}
	good, fresh := res.Packages[0], res.Packages[1]
	if !good.Succeeded || !good.FromBase || good.CSV != "good.v2" || good.UpgradedFrom != "good.v1" {
		t.Errorf("good = %+v", good)
	}
	if !fresh.Succeeded || fresh.FromBase || fresh.CSV != "new.v1" || fresh.UpgradedFrom != "" {
		t.Errorf("new = %+v", fresh)
	}
	var steps []string
	for _, s := range res.Steps {
		steps = append(steps, s.Step)
	}
	if !slices.Contains(steps, "catalog source (base catalog)") || !slices.Contains(steps, "catalog source (head catalog)") {
		t.Errorf("steps = %q", steps)
	}
	// the base install finished before the switch; the new package subscribed after it
	switched := strings.Index(progress, "catalog source (head catalog): done")
	if base := strings.Index(progress, "good: CSV good.v1 Succeeded in namespace smoke-good (base catalog)"); base < 0 || base > switched {
		t.Errorf("base install not before the switch:\n%s", progress)
	}
	if sub := strings.Index(progress, "new: subscribed"); sub < switched {
		t.Errorf("the new package subscribed before the head catalog served:\n%s", progress)
	}
	cs, err := f.c.dyn.Resource(gvrCatalogSource).Namespace("olm-global").Get(context.Background(), CatalogSourceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := cs.Object["spec"].(map[string]any)["image"]; img != testDigest {
		t.Errorf("CatalogSource image = %v, want the head", img)
	}
}

// A head catalog that does not offer the upgrade its channel promises (here the fake serves no v2): the
// install from the base succeeds, the package fails naming the bundle that never came.
func TestRunUpgradeFromBaseNotOffered(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1"}, inBase: 1}})
	f.baseImage = testBaseDigest
	res, err, progress := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		BaseCatalogImage: testBaseDigest, FromBase: []string{"good"}, Expect: map[string]string{"good": "good.v2"},
		Packages: []string{"good"}, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v\n%s", err, progress)
	}
	d := res.Packages[0].Diagnostics[0]
	if d.Rule != "no-upgrade" || d.Bundle != "good.v2" || !strings.Contains(d.Message, "good.v1 was installed from the base catalog") ||
		!strings.Contains(d.Message, "waiting for the catalog to offer an upgrade to good.v2") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

// A package the base catalog lacks is not installed from it, whatever the caller asks: PlanChange leaves
// it out of FromBase; here the caller insists and the base install fails with OLM's resolution error.
func TestRunFromBaseMissingInBaseFails(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"new": {versions: []string{"new.v1"}}})
	f.baseImage = testBaseDigest
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		BaseCatalogImage: testBaseDigest, FromBase: []string{"new"}, Expect: map[string]string{"new": "new.v1"},
		Packages: []string{"new"}, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	d := res.Packages[0].Diagnostics[0]
	if !strings.HasPrefix(d.Message, "installing from the base catalog: ") || d.Bundle != "new.v1" {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

func TestRunBundleImageUnpullable(t *testing.T) {
	img := "catalogbot.local/smoke/bundle-x@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	f := newFakeCluster(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, bundleImage: img, unpack: "unpullable"}})
	res, err, progress := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		BundleImages: map[string]BundleRef{img: {Package: "x", Bundle: "x.v1"}}, Packages: []string{"x"}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v\n%s", err, progress)
	}
	ds := res.Packages[0].Diagnostics
	if d := ds[0]; d.Rule != "bundle-image-unpullable" || d.Bundle != "x.v1" || !strings.Contains(d.Message, img) || !strings.Contains(d.Message, "ImagePullBackOff") {
		t.Errorf("lead diagnostic = %+v", d)
	}
	if all := diagText(ds); !strings.Contains(all, "bundle-unpack pod olm-global/unpack-x of bundle x.v1: phase Pending") {
		t.Errorf("diagnostics lack the unpack pod:\n%s", all)
	}
}

func TestRunBundleUnpackFails(t *testing.T) {
	img := "catalogbot.local/smoke/bundle-x@sha256:2222222222222222222222222222222222222222222222222222222222222222"
	f := newFakeCluster(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, bundleImage: img, unpack: "fail"}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		BundleImages: map[string]BundleRef{img: {Package: "x", Bundle: "x.v1"}}, Packages: []string{"x"}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	ds := res.Packages[0].Diagnostics
	if d := ds[0]; d.Rule != "unpack-failed" || d.Bundle != "x.v1" || !strings.Contains(d.Message, "container pull exited 1") ||
		!strings.Contains(d.Message, "error finding metadata directory") {
		t.Errorf("lead diagnostic = %+v", d)
	}
	if all := diagText(ds); !strings.Contains(all, "log lines of container pull in pod olm-global/unpack-x") {
		t.Errorf("diagnostics lack the failed container's log:\n%s", all)
	}
}

// Attack: a failing unpack pod of someone else's bundle must not fail this package (with parallel
// installs, another package's broken bundle is unpacked in the same catalog namespace).
func TestRunUnpackFailureOfAnotherPackageIsNotThis(t *testing.T) {
	img := "catalogbot.local/smoke/bundle-other@sha256:3333333333333333333333333333333333333333333333333333333333333333"
	f := newFakeCluster(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, bundleImage: img, unpack: "fail"}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		BundleImages: map[string]BundleRef{img: {Package: "other", Bundle: "other.v1"}}, Packages: []string{"x"}, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	if d := res.Packages[0].Diagnostics[0]; d.Rule != "install-timeout" {
		t.Errorf("lead diagnostic = %+v, want the timeout: the failing pod unpacks another package's bundle", d)
	}
}

func TestOptionsBaseCatalog(t *testing.T) {
	for name, o := range map[string]Options{
		"base by tag":         {BaseCatalogImage: "x/catalog:v1", FromBase: []string{"a"}, Expect: map[string]string{"a": "a.v2"}},
		"from base, no base":  {FromBase: []string{"a"}, Expect: map[string]string{"a": "a.v2"}},
		"from base, unlisted": {BaseCatalogImage: testBaseDigest, FromBase: []string{"b"}, Expect: map[string]string{"b": "b.v2"}},
		"from base, no want":  {BaseCatalogImage: testBaseDigest, FromBase: []string{"a"}},
		"from base and start": {BaseCatalogImage: testBaseDigest, FromBase: []string{"a"}, Expect: map[string]string{"a": "a.v2"}, Upgrade: map[string]string{"a": "a.v1"}},
	} {
		o.KubeconfigPath, o.CatalogImage, o.Packages = "k", testDigest, []string{"a"}
		if err := o.validate(); diag.CategoryOf(err) != diag.Usage {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

func TestPlanChange(t *testing.T) {
	base := loadCatalog(t, `{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1"}]}
{"schema":"olm.bundle","package":"a","name":"a.v1","image":"r/a@sha256:01","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
{"schema":"olm.package","name":"c","defaultChannel":"old"}
{"schema":"olm.channel","package":"c","name":"old","entries":[{"name":"c.v1"}]}
{"schema":"olm.bundle","package":"c","name":"c.v1","image":"r/c@sha256:01","properties":[{"type":"olm.package","value":{"packageName":"c","version":"1.0.0"}}]}
`)
	head := loadCatalog(t, `{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1"}]}
{"schema":"olm.bundle","package":"a","name":"a.v1","image":"r/a@sha256:01","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
{"schema":"olm.bundle","package":"a","name":"a.v2","image":"r/a@sha256:02","properties":[{"type":"olm.package","value":{"packageName":"a","version":"2.0.0"}}]}
{"schema":"olm.package","name":"b","defaultChannel":"stable"}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","package":"b","name":"b.v1","image":"r/b@sha256:01","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
{"schema":"olm.package","name":"c","defaultChannel":"new"}
{"schema":"olm.channel","package":"c","name":"new","entries":[{"name":"c.v2"}]}
{"schema":"olm.bundle","package":"c","name":"c.v2","image":"r/c@sha256:02","properties":[{"type":"olm.package","value":{"packageName":"c","version":"2.0.0"}}]}
`)
	p := PlanChange(base, head, []string{"c", "a", "b", "gone"}, nil)
	if !slices.Equal(p.Packages, []string{"a", "b", "c"}) {
		t.Errorf("packages = %q", p.Packages)
	}
	// c changed its default channel: a subscription without channel would not upgrade across it
	if !slices.Equal(p.FromBase, []string{"a"}) {
		t.Errorf("from base = %q", p.FromBase)
	}
	if p.Expect["a"] != "a.v2" || p.Expect["b"] != "b.v1" || p.Expect["c"] != "c.v2" {
		t.Errorf("expect = %v", p.Expect)
	}
	if len(p.BundleImages) != 5 || p.BundleImages["r/c@sha256:01"] != (BundleRef{Package: "c", Bundle: "c.v1"}) {
		t.Errorf("bundle images = %v", p.BundleImages)
	}
	if !maps.Equal(p.Versions, map[string]string{"a": "2.0.0", "b": "1.0.0", "c": "2.0.0"}) || !maps.Equal(p.BaseVersions, map[string]string{"a": "1.0.0"}) {
		t.Errorf("versions = %v, base versions = %v", p.Versions, p.BaseVersions)
	}
	if p := PlanChange(nil, head, []string{"a"}, nil); len(p.FromBase) != 0 {
		t.Errorf("no base: from base = %q", p.FromBase)
	}
}

func loadCatalog(t *testing.T, blobs string) *catalog.Catalog {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := catalog.LoadDir(context.Background(), dir, catalog.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Catalog
}

func TestRunKeepClusterCleansItsObjects(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
	b := &fakeBackend{}
	res, err, progress := runFake(t, f, b, Options{CreateCluster: true, KeepCluster: true, CatalogImage: testDigest,
		Packages: []string{"good"}, Timeout: 5 * time.Second})
	if err != nil || !res.ClusterCreated {
		t.Fatalf("Run: %v (created %t)\n%s", err, res.ClusterCreated, progress)
	}
	if calls := b.Calls(); slices.Contains(calls, "delete catalogbot-smoke") {
		t.Errorf("the cluster was deleted: %q", calls)
	}
	if _, err := f.kube.CoreV1().Namespaces().Get(context.Background(), "smoke-good", metav1.GetOptions{}); err == nil {
		t.Error("namespace smoke-good was not deleted")
	}
	if _, err := f.c.dyn.Resource(gvrCatalogSource).Namespace("olm-global").Get(context.Background(), CatalogSourceName, metav1.GetOptions{}); err == nil {
		t.Error("the CatalogSource was not deleted")
	}
}

func TestRunResolutionFailedNamesTheBundle(t *testing.T) {
	defer func(g time.Duration) { resolutionGrace = g }(resolutionGrace)
	resolutionGrace = 20 * time.Millisecond
	f := newFakeCluster(t, true, map[string]fakeOperator{})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"missing"}, Expect: map[string]string{"missing": "missing.v1"}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	d := res.Packages[0].Diagnostics[0]
	if d.Rule != "resolution-failed" || d.Bundle != "missing.v1" || !strings.Contains(d.Message, "ConstraintsNotSatisfiable: no operators found in package missing") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

func TestRunCSVFailedNamesTheBundle(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, failCSV: true}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"x"}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	if d := res.Packages[0].Diagnostics[0]; d.Rule != "csv-failed" || d.Bundle != "x.v1" || !strings.Contains(d.Message, "CSV smoke-x/x.v1 failed: InstallWaiting") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

// OLM v0 may report a CSV Failed with RequirementsNotMet for a moment during an upgrade and then move it
// on: that is not the package's failure while it lasts less than requirementsGrace; when it persists, it is.
func TestRunRequirementsNotMetIsRetriedThenFails(t *testing.T) {
	defer func(g time.Duration) { requirementsGrace = g }(requirementsGrace)
	requirementsGrace = time.Minute
	f := newFakeCluster(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, requirements: true, recovers: true}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"x"}, Timeout: 10 * time.Second})
	if err != nil || !res.Packages[0].Succeeded {
		t.Fatalf("a CSV back from RequirementsNotMet: err = %v, result %+v", err, res.Packages[0])
	}

	requirementsGrace = 20 * time.Millisecond
	f = newFakeCluster(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, requirements: true}})
	res, err, _ = runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"x"}, Timeout: 10 * time.Second})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	if d := res.Packages[0].Diagnostics[0]; d.Rule != "csv-failed" || !strings.Contains(d.Message, "RequirementsNotMet: requirements no longer met") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}
