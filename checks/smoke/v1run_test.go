package smoke

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/catalogbot/catalogbot/diag"
)

func init() { retryGrace = 100 * time.Millisecond }

func v1Options(pkgs ...string) Options {
	return Options{OLM: OLMv1, ClusterName: "dev", CatalogImage: testDigest, Packages: pkgs, Timeout: 5 * time.Second}
}

func stepNames(steps []StepTiming) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Step)
	}
	return out
}

func TestRunV1InstallsAndWaitsForDeployments(t *testing.T) {
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1", "good.v2"}}})
	opts := v1Options("good")
	opts.Versions, opts.Expect = map[string]string{"good": "2.0.0"}, map[string]string{"good": "good.v2"}
	opts.Channel, opts.Keep = map[string]string{"good": "stable"}, true
	res, err, progress := runFake(t, f, &fakeBackend{exists: true}, opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	if res.OLM != OLMv1 || res.ClusterCatalog != ClusterCatalogName || res.CatalogSource != "" || res.OLMInstalled {
		t.Errorf("result = %+v", res)
	}
	p := res.Packages[0]
	if !p.Succeeded || p.OLM != OLMv1 || p.ClusterExtension != "smoke-good" || p.Namespace != "smoke-good" || p.Bundle != "good.v2" || p.Version != "2.0.0" {
		t.Errorf("package result = %+v", p)
	}
	if want := []string{"cluster extension", "installed good.v2", "deployments good.v2"}; !slices.Equal(stepNames(p.Steps), want) {
		t.Errorf("steps = %q, want %q", stepNames(p.Steps), want)
	}
	if !strings.Contains(progress, "good: bundle good.v2 (version 2.0.0) installed and available in namespace smoke-good") {
		t.Errorf("progress lacks the success line:\n%s", progress)
	}
	ctx := context.Background()
	cc, err := f.c.dyn.Resource(gvrClusterCatalog).Get(ctx, ClusterCatalogName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ref, _, _ := unstructured.NestedString(cc.Object, "spec", "source", "image", "ref"); ref != testDigest || cc.GetLabels()[catalogNameLabel] != ClusterCatalogName {
		t.Errorf("ClusterCatalog = %v", cc.Object)
	}
	ce, err := f.c.dyn.Resource(gvrClusterExtension).Get(ctx, "smoke-good", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := ce.Object["spec"].(map[string]any)
	src, _, _ := unstructured.NestedMap(spec, "source", "catalog")
	sel, _, _ := unstructured.NestedString(src, "selector", "matchLabels", catalogNameLabel)
	if spec["namespace"] != "smoke-good" || src["packageName"] != "good" || src["version"] != "2.0.0" || sel != ClusterCatalogName || !slices.Equal(src["channels"].([]any), []any{"stable"}) {
		t.Errorf("ClusterExtension spec = %v", spec)
	}
}

// Installed=True does not mean the operator runs: a crash-looping operator fails, with the
// ClusterExtension's conditions, the events, the pod's logs and the controllers' lines about the package
// (not those about other packages); what Run created is deleted.
func TestRunV1CrashLoopFailsAlthoughInstalled(t *testing.T) {
	f, v := newFakeV1(t, true, map[string]fakeOperator{
		"good":   {versions: []string{"good.v1"}},
		"broken": {versions: []string{"broken.v1"}, crash: true},
	})
	v.setLog("operator-controller-controller-manager-0", `I1127 reconciling ClusterExtension smoke-good
I1127 reconciling ClusterExtension smoke-broken
I1127 unrelated line
I1127 applied bundle "broken.v1" for ClusterExtension smoke-broken
`)
	res, err, progress := runFake(t, f, &fakeBackend{exists: true}, v1Options("good", "broken"))
	if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid || strings.Contains(err.Error(), "good") {
		t.Fatalf("err = %v (category %v), want ErrPackagesFailed/invalid naming only broken\n%s", err, diag.CategoryOf(err), progress)
	}
	byName := byPackage(res)
	if !byName["good"].Succeeded {
		t.Errorf("good failed: %+v", byName["good"])
	}
	b := byName["broken"]
	if b.Succeeded || len(b.Diagnostics) == 0 || b.OLM != OLMv1 {
		t.Fatalf("broken = %+v", b)
	}
	if lead := b.Diagnostics[0]; lead.Rule != "crash-loop" || lead.Bundle != "broken.v1" || !strings.Contains(lead.Message, "restarted 5 times") {
		t.Errorf("lead diagnostic = %+v", lead)
	}
	all := diagText(b.Diagnostics)
	for _, want := range []string{
		"ClusterExtension smoke-broken: installed bundle broken.v1 (version 1.0.0); Installed=True Succeeded",
		"ClusterCatalog catalogbot-smoke: resolved \"" + testDigest + "\"; Progressing=True Succeeded",
		"Warning Pod/broken-operator-abc BackOff: Back-off restarting failed container operator (x7)",
		"container operator: ready=false restarts=5 waiting CrashLoopBackOff",
		"fake logs",
		"reconciling ClusterExtension smoke-broken",
		`applied bundle "broken.v1"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	for _, unwanted := range []string{"smoke-good", "unrelated line"} {
		if strings.Contains(all, unwanted) {
			t.Errorf("diagnostics of broken carry %q:\n%s", unwanted, all)
		}
	}
	ctx := context.Background()
	if _, err := f.c.dyn.Resource(gvrClusterExtension).Get(ctx, "smoke-broken", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterExtension not deleted: %v", err)
	}
	if _, err := f.c.dyn.Resource(gvrClusterCatalog).Get(ctx, ClusterCatalogName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ClusterCatalog not deleted: %v", err)
	}
	if _, err := f.kube.CoreV1().Namespaces().Get(ctx, "smoke-broken", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace not deleted: %v", err)
	}
}

// A Deployment that never becomes available (without crashing) fails at the timeout, naming it.
func TestRunV1DeploymentNeverAvailable(t *testing.T) {
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"slow": {versions: []string{"slow.v1"}, unavailable: true}})
	opts := v1Options("slow")
	opts.Timeout = 2 * time.Second
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
	if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("err = %v", err)
	}
	d := res.Packages[0].Diagnostics[0]
	if d.Rule != "install-timeout" || !strings.Contains(d.Message, "ClusterExtension smoke-slow") || !strings.Contains(d.Message, "Deployment smoke-slow/slow-controller-manager not available") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

// A bundle OLM v1 will not install fails at once with OLM v1's own reason.
func TestRunV1BlockedFailsWithOLMsReason(t *testing.T) {
	const reason = "invalid ClusterExtension configuration: bundle does not support AllNamespaces install mode"
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"own": {versions: []string{"own.v1"}, blocked: reason}})
	opts := v1Options("own")
	opts.Timeout = time.Minute // the failure must not wait for it
	start := time.Now()
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
	if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid || time.Since(start) > 10*time.Second {
		t.Fatalf("err = %v after %s", err, time.Since(start))
	}
	d := res.Packages[0].Diagnostics[0]
	if d.Rule != "install-blocked" || !strings.Contains(d.Message, "ClusterExtension smoke-own Progressing=False Blocked: "+reason) {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

// An error operator-controller keeps retrying (a bundle image it cannot pull) fails once it persists,
// with its message.
func TestRunV1PersistentRetryFails(t *testing.T) {
	const msg = "error pulling bundle image catalogbot.local/own@sha256:01: manifest unknown"
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"x": {versions: []string{"x.v1"}, retrying: msg}})
	opts := v1Options("x")
	opts.Timeout = time.Minute
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	if d := res.Packages[0].Diagnostics[0]; d.Rule != "install-failed" || !strings.Contains(d.Message, msg) {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

// A ClusterExtension that never settles is bounded by Timeout and named.
func TestRunV1ClusterExtensionNeverSettles(t *testing.T) {
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"mute": {versions: []string{"mute.v1"}, silent: true}})
	opts := v1Options("mute")
	opts.Timeout = 300 * time.Millisecond
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	d := res.Packages[0].Diagnostics[0]
	if d.Rule != "install-timeout" || !strings.Contains(d.Message, "ClusterExtension smoke-mute not installed yet: no conditions yet") || !strings.Contains(d.Message, "within 300ms") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

// A package name that is not a valid object name fails that package (the change's fault) without
// creating anything for it; the others install.
func TestRunV1InvalidPackageName(t *testing.T) {
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, v1Options("good", "Evil_Name/../x"))
	if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("err = %v", err)
	}
	if !res.Packages[0].Succeeded {
		t.Errorf("good = %+v", res.Packages[0])
	}
	bad := res.Packages[1]
	if bad.Succeeded || len(bad.Diagnostics) != 1 || bad.Diagnostics[0].Rule != "invalid-package-name" || !strings.Contains(bad.Diagnostics[0].Message, `package name "Evil_Name/../x"`) {
		t.Errorf("bad = %+v", bad)
	}
	if _, err := f.c.dyn.Resource(gvrClusterExtension).Get(context.Background(), bad.ClusterExtension, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a ClusterExtension was created for the invalid name: %v", err)
	}
}

// A catalog that never serves is infrastructure, bounded by Timeout, naming the ClusterCatalog.
func TestRunV1CatalogNeverServes(t *testing.T) {
	f, v := newFakeV1(t, true, nil)
	v.catalogNeverServes = true
	v.setLog("catalogd-controller-manager-0", "E1127 unpacking ClusterCatalog catalogbot-smoke: connection refused\nI1127 other\n")
	opts := v1Options("x")
	opts.Timeout = time.Second
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
	if diag.CategoryOf(err) != diag.Infra || !strings.Contains(err.Error(), "ClusterCatalog catalogbot-smoke does not serve "+testDigest) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v (category %v)", err, diag.CategoryOf(err))
	}
	all := diagText(res.Diagnostics)
	if res.Diagnostics[0].Rule != "step-cluster-catalog" || !strings.Contains(all, "Serving=False Unavailable") || !strings.Contains(all, "unpacking ClusterCatalog catalogbot-smoke") || strings.Contains(all, "other") {
		t.Errorf("diagnostics:\n%s", all)
	}
}

// A catalog catalogd gives up on (Progressing=False) ends the wait at once.
func TestRunV1CatalogBlocked(t *testing.T) {
	f, v := newFakeV1(t, true, nil)
	v.catalogBlocked = "catalog image is missing the required label operators.operatorframework.io.index.configs.v1"
	opts := v1Options("x")
	opts.Timeout = time.Minute
	_, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
	if diag.CategoryOf(err) != diag.Infra || !strings.Contains(err.Error(), "Progressing=False Blocked: catalog image is missing the required label") {
		t.Fatalf("err = %v (category %v)", err, diag.CategoryOf(err))
	}
}

func TestRunV1UpgradesFromTheBaseCatalog(t *testing.T) {
	f, _ := newFakeV1(t, true, map[string]fakeOperator{
		"up":    {versions: []string{"up.v1", "up.v2"}, inBase: 1},
		"fresh": {versions: []string{"fresh.v1"}},
	})
	f.baseImage = testBaseDigest
	opts := v1Options("up", "fresh")
	opts.BaseCatalogImage, opts.FromBase = testBaseDigest, []string{"up"}
	opts.BaseVersions, opts.Versions = map[string]string{"up": "1.0.0"}, map[string]string{"up": "2.0.0", "fresh": "1.0.0"}
	opts.Expect = map[string]string{"up": "up.v2", "fresh": "fresh.v1"}
	res, err, progress := runFake(t, f, &fakeBackend{exists: true}, opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	up := res.Packages[0]
	if !up.Succeeded || !up.FromBase || up.UpgradedFrom != "up.v1" || up.Bundle != "up.v2" || up.Version != "2.0.0" {
		t.Errorf("up = %+v", up)
	}
	if want := []string{"cluster extension", "installed up.v1", "deployments up.v1", "installed up.v2", "deployments up.v2"}; !slices.Equal(stepNames(up.Steps), want) {
		t.Errorf("steps = %q, want %q", stepNames(up.Steps), want)
	}
	if fresh := res.Packages[1]; !fresh.Succeeded || fresh.FromBase || fresh.Bundle != "fresh.v1" {
		t.Errorf("fresh = %+v", fresh)
	}
	if want := []string{"OLM v1", "cluster catalog (base catalog)", "cluster catalog (head catalog)"}; !slices.Equal(stepNames(res.Steps), want) {
		t.Errorf("steps = %q, want %q", stepNames(res.Steps), want)
	}
	if !strings.Contains(progress, "ClusterExtension smoke-up switched from version 1.0.0 to 2.0.0") {
		t.Errorf("progress:\n%s", progress)
	}
}

// The head catalog does not offer the head version: the package stays at the base's and fails, whether
// the timeout or a persisting Retrying ends the wait.
func TestRunV1UpgradeNotOffered(t *testing.T) {
	defer func(g time.Duration) { retryGrace = g }(retryGrace)
	for _, grace := range []time.Duration{time.Hour, 50 * time.Millisecond} {
		retryGrace = grace
		f, _ := newFakeV1(t, true, map[string]fakeOperator{"up": {versions: []string{"up.v1"}, inBase: 1}})
		f.baseImage = testBaseDigest
		opts := v1Options("up")
		opts.BaseCatalogImage, opts.FromBase = testBaseDigest, []string{"up"}
		opts.BaseVersions, opts.Versions = map[string]string{"up": "1.0.0"}, map[string]string{"up": "2.0.0"}
		opts.Timeout = 2 * time.Second
		res, err, _ := runFake(t, f, &fakeBackend{exists: true}, opts)
		if !errors.Is(err, ErrPackagesFailed) {
			t.Fatalf("grace %s: err = %v", grace, err)
		}
		d := res.Packages[0].Diagnostics[0]
		if d.Rule != "no-upgrade" || !strings.Contains(d.Message, "up.v1 (version 1.0.0) was installed from the base catalog, but OLM v1 did not upgrade it to version 2.0.0") ||
			!strings.Contains(d.Message, `no bundles found for package "up" matching version "2.0.0"`) {
			t.Errorf("grace %s: lead diagnostic = %+v", grace, d)
		}
	}
}

func TestRunV1InstallsOLMv1FromManifests(t *testing.T) {
	dir := t.TempDir()
	var crds strings.Builder
	for _, n := range olmv1CRDs {
		crds.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + n + "\n---\n")
	}
	os.WriteFile(filepath.Join(dir, "00-crds.yaml"), []byte(crds.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "10-olmv1.yaml"), []byte(`apiVersion: v1
kind: Namespace
metadata: {name: olmv1-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: catalogd-controller-manager, namespace: olmv1-system}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: operator-controller-controller-manager, namespace: olmv1-system}
`), 0o644)
	f, _ := newFakeV1(t, false, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
	opts := v1Options("good")
	opts.ClusterName, opts.CreateCluster, opts.OLMv1ManifestsDir, opts.OLMManifestsDir = "", true, dir, "/nonexistent"
	res, err, progress := runFake(t, f, &fakeBackend{}, opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	if !res.OLMInstalled || !slices.Contains(f.applied, "Deployment/operator-controller-controller-manager") {
		t.Errorf("OLM v1 not installed: %+v, applied %q", res, f.applied)
	}

	// without manifests a cluster lacking OLM v1 is a usage error (and a created cluster is deleted)
	f, _ = newFakeV1(t, false, nil)
	b := &fakeBackend{}
	opts.OLMv1ManifestsDir = ""
	_, err, _ = runFake(t, f, b, opts)
	if !errors.Is(err, errNoOLMv1) || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("err = %v (category %v)", err, diag.CategoryOf(err))
	}
	if calls := b.Calls(); calls[len(calls)-1] != "delete catalogbot-smoke" {
		t.Errorf("cluster not deleted: %q", calls)
	}
}

// KeepCluster keeps a cluster Run created but deletes what it made there; Keep keeps everything.
func TestRunV1KeepClusterCleansItsObjects(t *testing.T) {
	for _, keep := range []bool{false, true} {
		f, _ := newFakeV1(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
		b := &fakeBackend{}
		opts := v1Options("good")
		opts.ClusterName, opts.CreateCluster, opts.KeepCluster, opts.Keep = "", true, !keep, keep
		res, err, progress := runFake(t, f, b, opts)
		if err != nil || !res.ClusterCreated {
			t.Fatalf("keep=%v: %v %+v\n%s", keep, err, res, progress)
		}
		if calls := b.Calls(); slices.Contains(calls, "delete catalogbot-smoke") {
			t.Errorf("keep=%v: the cluster was deleted: %q", keep, calls)
		}
		ctx := context.Background()
		_, ceErr := f.c.dyn.Resource(gvrClusterExtension).Get(ctx, "smoke-good", metav1.GetOptions{})
		_, ccErr := f.c.dyn.Resource(gvrClusterCatalog).Get(ctx, ClusterCatalogName, metav1.GetOptions{})
		_, nsErr := f.kube.CoreV1().Namespaces().Get(ctx, "smoke-good", metav1.GetOptions{})
		for what, err := range map[string]error{"ClusterExtension": ceErr, "ClusterCatalog": ccErr, "namespace": nsErr} {
			if gone := apierrors.IsNotFound(err); gone == keep {
				t.Errorf("keep=%v: %s gone=%v (%v)", keep, what, gone, err)
			}
		}
	}
}

// Two packages whose names map to the same namespace and ClusterExtension: the later one fails without
// touching the other's objects, which installs as if alone.
func TestRunV1NameCollision(t *testing.T) {
	f, _ := newFakeV1(t, true, map[string]fakeOperator{"a-b": {versions: []string{"a-b.v1"}}, "a.b": {versions: []string{"a.b.v1"}, crash: true}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, v1Options("a-b", "a.b"))
	if !errors.Is(err, ErrPackagesFailed) || !strings.Contains(err.Error(), "a.b") || strings.Contains(err.Error(), "a-b") {
		t.Fatalf("err = %v", err)
	}
	if first := res.Packages[0]; !first.Succeeded || first.Bundle != "a-b.v1" {
		t.Errorf("a-b = %+v", first)
	}
	d := res.Packages[1].Diagnostics
	if len(d) != 1 || d[0].Rule != "name-collision" || !strings.Contains(d[0].Message, "packages a-b and a.b would share the namespace and ClusterExtension smoke-a-b") {
		t.Errorf("a.b diagnostics = %+v", d)
	}
}
