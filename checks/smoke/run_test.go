package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

const testDigest = "catalogbot.local/smoke/catalog@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func init() { pollEvery = 5 * time.Millisecond }

// runFake runs Run's body against the fake cluster with its OLM simulation.
//
//lint:ignore ST1008 the progress text comes last, as the helper's callers read it last
func runFake(t *testing.T, f *fakeCluster, b *fakeBackend, opts Options) (Result, error, string) {
	t.Helper()
	var progress bytes.Buffer
	opts.Progress = &progress
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		t.Fatalf("options: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	simCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.simulate(simCtx); close(done) }()
	var backend clusterBackend
	if b != nil {
		backend = b
	}
	res, err := run(ctx, opts, backend, f.connect)
	stop()
	<-done
	return res, err, progress.String()
}

func TestRunCreatesClusterInstallsAndDeletes(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
	b := &fakeBackend{}
	res, err, progress := runFake(t, f, b, Options{CreateCluster: true, NodeImage: "node:x", CatalogImage: testDigest,
		CatalogArchive: "/tmp/catalog.tar", ImageArchives: []string{"/tmp/op.tar"}, Packages: []string{"good"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	want := []string{"create catalogbot-smoke node:x", "load /tmp/catalog.tar", "load /tmp/op.tar", "delete catalogbot-smoke"}
	if got := b.Calls(); !slices.Equal(got, want) {
		t.Errorf("backend calls = %q, want %q", got, want)
	}
	if len(res.Packages) != 1 {
		t.Fatalf("packages = %+v", res.Packages)
	}
	p := res.Packages[0]
	if !p.Succeeded || p.CSV != "good.v1" || p.Phase != "Succeeded" || p.Namespace != "smoke-good" || p.InstallMode != "AllNamespaces" {
		t.Errorf("package result = %+v", p)
	}
	if res.CatalogNamespace != "olm-global" || !res.ClusterCreated || res.OLMInstalled {
		t.Errorf("result = %+v", res)
	}
	if !strings.Contains(progress, "good: CSV good.v1 Succeeded in namespace smoke-good") {
		t.Errorf("progress lacks the success line:\n%s", progress)
	}
	// the Subscription asked for manual approval and the plan was approved by Run
	ip, err := f.c.dyn.Resource(gvrInstallPlan).Namespace("smoke-good").Get(context.Background(), "install-good-v1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _, _ := unstructuredBool(ip.Object, "spec", "approved"); !ok {
		t.Error("InstallPlan was not approved")
	}
	sub, err := f.c.dyn.Resource(gvrSubscription).Namespace("smoke-good").Get(context.Background(), "good", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec := sub.Object["spec"].(map[string]any)
	if spec["installPlanApproval"] != "Manual" || spec["source"] != CatalogSourceName || spec["sourceNamespace"] != "olm-global" {
		t.Errorf("subscription spec = %v", spec)
	}
	cs, err := f.c.dyn.Resource(gvrCatalogSource).Namespace("olm-global").Get(context.Background(), CatalogSourceName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img := cs.Object["spec"].(map[string]any)["image"]; img != testDigest {
		t.Errorf("CatalogSource image = %v, want the digest reference", img)
	}
	if _, err := json.Marshal(res); err != nil {
		t.Errorf("result does not marshal: %v", err)
	}
}

func unstructuredBool(obj map[string]any, fields ...string) (bool, bool, error) {
	var cur any = obj
	for _, f := range fields {
		m, ok := cur.(map[string]any)
		if !ok {
			return false, false, nil
		}
		cur = m[f]
	}
	b, ok := cur.(bool)
	return b, ok, nil
}

func TestRunCrashLoopFailsWithDiagnostics(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{
		"good":   {versions: []string{"good.v1"}},
		"broken": {versions: []string{"broken.v1"}, crash: true},
	})
	res, err, progress := runFake(t, f, nil, Options{KubeconfigPath: writeKubeconfig(t), CatalogImage: testDigest,
		Packages: []string{"good", "broken"}, Timeout: 5 * time.Second})
	if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("err = %v (category %v), want ErrPackagesFailed/invalid\n%s", err, diag.CategoryOf(err), progress)
	}
	if !strings.Contains(err.Error(), "broken") || strings.Contains(err.Error(), "good") {
		t.Errorf("error should name only the broken package: %v", err)
	}
	byName := byPackage(res)
	if !byName["good"].Succeeded {
		t.Errorf("good failed: %+v", byName["good"])
	}
	b := byName["broken"]
	if b.Succeeded || len(b.Diagnostics) == 0 {
		t.Fatalf("broken = %+v", b)
	}
	lead := b.Diagnostics[0]
	if lead.Severity != diag.Error || lead.Rule != "crash-loop" || !strings.Contains(lead.Message, "restarted 5 times") {
		t.Errorf("lead diagnostic = %+v", lead)
	}
	all := diagText(b.Diagnostics)
	for _, want := range []string{
		"Subscription smoke-broken/broken: state \"AtLatestKnown\"",
		"InstallPlan smoke-broken/install-broken-v1: phase \"Complete\", approved true",
		"CSV smoke-broken/broken.v1: phase \"Installing\"",
		"Warning Pod/broken-operator-abc BackOff: Back-off restarting failed container operator (x7)",
		"container operator: ready=false restarts=5 waiting CrashLoopBackOff",
		"log lines of container operator in pod smoke-broken/broken-operator-abc",
		"fake logs", // client-go's fake log stream: proves the log tail is fetched
	} {
		if !strings.Contains(all, want) {
			t.Errorf("diagnostics lack %q:\n%s", want, all)
		}
	}
	// the cluster was not created by Run: its namespaces and CatalogSource are cleaned up
	if _, err := f.kube.CoreV1().Namespaces().Get(context.Background(), "smoke-broken", metav1.GetOptions{}); err == nil {
		t.Error("namespace smoke-broken was not deleted")
	}
}

func diagText(ds []diag.Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteString("\n")
	}
	return b.String()
}

func writeKubeconfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte("fake"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRunUpgrade(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1", "good.v2", "good.v3"}}})
	res, err, progress := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"good"}, Upgrade: map[string]string{"good": "good.v1"}, Timeout: 5 * time.Second, Keep: true})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	p := res.Packages[0]
	if !p.Succeeded || p.CSV != "good.v3" || p.UpgradedFrom != "good.v1" {
		t.Errorf("package = %+v", p)
	}
	var steps []string
	for _, s := range p.Steps {
		steps = append(steps, s.Step)
	}
	if want := []string{"subscribe", "csv good.v1", "csv good.v2", "csv good.v3"}; !slices.Equal(steps, want) {
		t.Errorf("steps = %q, want %q", steps, want)
	}
	if res.ClusterCreated {
		t.Error("reused cluster reported as created")
	}
	// Keep: nothing is cleaned up
	if _, err := f.kube.CoreV1().Namespaces().Get(context.Background(), "smoke-good", metav1.GetOptions{}); err != nil {
		t.Errorf("kept namespace is gone: %v", err)
	}
}

func TestRunUpgradeNotOffered(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"good"}, Upgrade: map[string]string{"good": "good.v1"}, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	if d := res.Packages[0].Diagnostics[0]; d.Rule != "no-upgrade" || !strings.Contains(d.Message, "waiting for the catalog to offer an upgrade") {
		t.Errorf("lead diagnostic = %+v", d)
	}
}

func TestRunResolutionFailureTimesOutWithReason(t *testing.T) {
	f := newFakeCluster(t, true, map[string]fakeOperator{})
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"missing"}, Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrPackagesFailed) {
		t.Fatalf("err = %v", err)
	}
	d := res.Packages[0].Diagnostics[0]
	if d.Rule != "install-timeout" || !strings.Contains(d.Message, "no current CSV") {
		t.Errorf("lead diagnostic = %+v", d)
	}
	if !strings.Contains(diagText(res.Packages[0].Diagnostics), "ResolutionFailed=True ConstraintsNotSatisfiable: no operators found in package missing") {
		t.Errorf("diagnostics lack the Subscription condition:\n%s", diagText(res.Packages[0].Diagnostics))
	}
}

func TestRunInstallsOLMFromManifests(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "00-crds.yaml"), []byte(crdsYAML()), 0o644)
	os.WriteFile(filepath.Join(dir, "10-olm.yaml"), []byte(`apiVersion: v1
kind: Namespace
metadata: {name: olm}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: olm-operator, namespace: olm}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: catalog-operator, namespace: olm}
`), 0o644)
	f := newFakeCluster(t, false, map[string]fakeOperator{"good": {versions: []string{"good.v1"}}})
	res, err, progress := runFake(t, f, &fakeBackend{}, Options{CreateCluster: true, OLMManifestsDir: dir, CatalogImage: testDigest,
		Packages: []string{"good"}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress)
	}
	if !res.OLMInstalled {
		t.Error("OLMInstalled = false")
	}
	// namespaces and CRDs go first, in a call of their own
	first := slices.Index(f.applied, "Deployment/olm-operator")
	for i, a := range f.applied {
		isFirst := strings.HasPrefix(a, "Namespace/") || strings.HasPrefix(a, "CustomResourceDefinition/")
		if isFirst != (i < first) {
			t.Errorf("apply order %q", f.applied)
			break
		}
	}
}

func crdsYAML() string {
	var b strings.Builder
	for _, n := range olmCRDs {
		b.WriteString("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: " + n + "\n---\n")
	}
	return b.String()
}

func TestRunWithoutOLMIsUsageErrorAndDeletesCluster(t *testing.T) {
	f := newFakeCluster(t, false, nil)
	b := &fakeBackend{}
	_, err, _ := runFake(t, f, b, Options{CreateCluster: true, CatalogImage: testDigest, Packages: []string{"x"}, Timeout: time.Second})
	if !errors.Is(err, errNoOLM) || diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("err = %v (category %v)", err, diag.CategoryOf(err))
	}
	if calls := b.Calls(); calls[len(calls)-1] != "delete catalogbot-smoke" {
		t.Errorf("cluster not deleted: %q", calls)
	}
}

func TestRunCatalogNeverReady(t *testing.T) {
	f := newFakeCluster(t, true, nil)
	f.catalogNeverReady = true
	res, err, _ := runFake(t, f, &fakeBackend{exists: true}, Options{ClusterName: "dev", CatalogImage: testDigest,
		Packages: []string{"x"}, Timeout: 200 * time.Millisecond})
	if diag.CategoryOf(err) != diag.Infra || !strings.Contains(err.Error(), "connection is TRANSIENT_FAILURE") {
		t.Fatalf("err = %v (category %v)", err, diag.CategoryOf(err))
	}
	if len(res.Diagnostics) == 0 || res.Diagnostics[0].Rule != "step-catalog-source" {
		t.Errorf("diagnostics = %+v", res.Diagnostics)
	}
}

func TestRunCancelDeletesHalfCreatedCluster(t *testing.T) {
	b := &fakeBackend{blockCreate: true}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	opts := Options{CreateCluster: true, CatalogImage: testDigest, Packages: []string{"x"}}.withDefaults()
	_, err := run(ctx, opts, b, func([]byte) (*clients, error) { return nil, errors.New("unreachable") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if calls := b.Calls(); len(calls) != 2 || calls[1] != "delete catalogbot-smoke" {
		t.Errorf("calls = %q", calls)
	}
}

// A created cluster that cannot be deleted is said so (ErrClusterNotDeleted, infrastructure), together
// with the error that ended the run.
func TestRunClusterNotDeleted(t *testing.T) {
	b := &fakeBackend{createErr: errors.New("node never ready"), deleteErr: errors.New("docker rm: device busy")}
	opts := Options{CreateCluster: true, CatalogImage: testDigest, Packages: []string{"x"}}.withDefaults()
	_, err := run(context.Background(), opts, b, nil)
	if !errors.Is(err, ErrClusterNotDeleted) || diag.CategoryOf(err) != diag.Infra || !strings.Contains(err.Error(), "node never ready") || !strings.Contains(err.Error(), "device busy") {
		t.Fatalf("err = %v", err)
	}
	b = &fakeBackend{createErr: errors.New("node never ready")}
	if _, err := run(context.Background(), opts, b, nil); errors.Is(err, ErrClusterNotDeleted) {
		t.Fatalf("deleted cluster reported as not deleted: %v", err)
	}
}

func TestRunMissingKindCluster(t *testing.T) {
	opts := Options{ClusterName: "nope", CatalogImage: testDigest, Packages: []string{"x"}}.withDefaults()
	_, err := run(context.Background(), opts, &fakeBackend{}, nil)
	if diag.CategoryOf(err) != diag.Usage || !strings.Contains(err.Error(), "kind cluster nope does not exist") {
		t.Fatalf("err = %v", err)
	}
}

// A container engine that does not answer (installed, daemon not started) is an infrastructure error
// that names the cluster and node image it was asked for, and nothing is created or deleted.
func TestRunEngineDownNamesNodeImage(t *testing.T) {
	b := &fakeBackend{existsErr: errors.New("listing kind clusters (is a container engine running?): Cannot connect to the Docker daemon")}
	opts := Options{CreateCluster: true, NodeImage: "node:v1.33", CatalogImage: testDigest, Packages: []string{"x"}}.withDefaults()
	_, err := run(context.Background(), opts, b, nil)
	if diag.CategoryOf(err) != diag.Infra || !strings.Contains(err.Error(), "node image node:v1.33") || !strings.Contains(err.Error(), "Docker daemon") {
		t.Fatalf("err = %v", err)
	}
	if calls := b.Calls(); len(calls) != 0 {
		t.Errorf("calls = %q", calls)
	}
}

// byPackage is a run's package results by package name.
func byPackage(res Result) map[string]PackageResult {
	m := map[string]PackageResult{}
	for _, p := range res.Packages {
		m[p.Package] = p
	}
	return m
}
