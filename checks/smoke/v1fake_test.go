package smoke

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// fakeV1 is a hand-written simulation of OLM v1's controllers on the fake cluster: catalogd serves the
// ClusterCatalog's image (Serving=True), operator-controller installs a ClusterExtension's package from
// it (Installed=True, status.install.bundle) and creates the release's Deployment, which becomes
// Available or crash-loops. Bundle versions are derived from the operators' bundle names ("x.v2" is
// version "2.0.0").
type fakeV1 struct {
	f *fakeCluster
	// catalogNeverServes keeps the ClusterCatalog Retrying a pull; catalogBlocked makes it
	// Progressing=False/Blocked with this message.
	catalogNeverServes bool
	catalogBlocked     string
	mu                 sync.Mutex
	// serving is the image the ClusterCatalog serves ("" before it serves).
	serving string
	// logs are the controllers' logs by pod name.
	logs map[string]string
}

// newFakeV1 is a fake cluster with the OLM v1 simulation; olmv1: whether OLM v1 runs from the start.
func newFakeV1(t *testing.T, olmv1 bool, ops map[string]fakeOperator) (*fakeCluster, *fakeV1) {
	t.Helper()
	f := newFakeCluster(t, false, ops)
	v := &fakeV1{f: f, logs: map[string]string{}}
	f.v1 = v
	f.c.core = logCore{typedCore: typedCore{f.kube}, v: v}
	if olmv1 {
		v.install(context.Background())
	}
	return f, v
}

// install creates OLM v1's CRDs and controllers (as applying its manifests would).
func (v *fakeV1) install(ctx context.Context) {
	for _, n := range olmv1CRDs {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": n}}}
		v.f.c.dyn.Resource(gvrCRD).Create(ctx, u, metav1.CreateOptions{})
	}
	for _, n := range []string{"catalogd-controller-manager", "operator-controller-controller-manager"} {
		v.f.createDeployment(ctx, olmv1Namespace, n)
		v.f.kube.CoreV1().Pods(olmv1Namespace).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: n + "-0", Namespace: olmv1Namespace},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "manager"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning},
		}, metav1.CreateOptions{})
	}
}

func (v *fakeV1) setLog(pod, text string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.logs[pod] = text
}

// logCore serves the controllers' logs from fakeV1 (client-go's fake answers "fake logs" for any pod).
type logCore struct {
	typedCore
	v *fakeV1
}

func (c logCore) podLog(ctx context.Context, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	c.v.mu.Lock()
	text, ok := c.v.logs[pod]
	c.v.mu.Unlock()
	if ns == olmv1Namespace && ok {
		return io.NopCloser(strings.NewReader(text)), nil
	}
	return c.typedCore.podLog(ctx, ns, pod, opts)
}

func (v *fakeV1) step(ctx context.Context) {
	dyn := v.f.c.dyn
	if ccs, _ := dyn.Resource(gvrClusterCatalog).List(ctx, metav1.ListOptions{}); ccs != nil {
		for _, cc := range ccs.Items {
			v.reconcileCatalog(ctx, &cc)
		}
	}
	if ces, _ := dyn.Resource(gvrClusterExtension).List(ctx, metav1.ListOptions{}); ces != nil {
		for _, ce := range ces.Items {
			v.reconcileExtension(ctx, &ce)
		}
	}
}

func cond(t, status, reason, msg string) map[string]any {
	return map[string]any{"type": t, "status": status, "reason": reason, "message": msg, "lastTransitionTime": "2026-01-01T00:00:00Z"}
}

func (v *fakeV1) reconcileCatalog(ctx context.Context, cc *unstructured.Unstructured) {
	ref, _, _ := unstructured.NestedString(cc.Object, "spec", "source", "image", "ref")
	var status map[string]any
	switch {
	case v.catalogBlocked != "":
		status = map[string]any{"conditions": []any{cond("Progressing", "False", "Blocked", v.catalogBlocked), cond("Serving", "False", "Unavailable", "Catalog is not available")}}
	case v.catalogNeverServes:
		status = map[string]any{"conditions": []any{cond("Progressing", "True", "Retrying", "source catalog content: error pulling image "+ref+": connection refused"), cond("Serving", "False", "Unavailable", "Catalog is not available")}}
	default:
		status = map[string]any{"conditions": []any{cond("Progressing", "True", "Succeeded", "Successfully unpacked and stored content from resolved source"), cond("Serving", "True", "Available", "Serving desired content from resolved source")},
			"resolvedSource": map[string]any{"type": "Image", "image": map[string]any{"ref": ref}}}
		v.mu.Lock()
		v.serving = ref
		v.mu.Unlock()
	}
	v.patchStatus(ctx, gvrClusterCatalog, cc, status)
}

// patchStatus merge-patches the status when it changed: a patch of the status alone never undoes a
// spec change Run made since the list (a new image, a new version).
func (v *fakeV1) patchStatus(ctx context.Context, gvr schema.GroupVersionResource, obj *unstructured.Unstructured, status map[string]any) {
	if old, _, _ := unstructured.NestedMap(obj.Object, "status"); reflect.DeepEqual(old, status) {
		return
	}
	data, _ := json.Marshal(map[string]any{"status": status})
	v.f.c.dyn.Resource(gvr).Patch(ctx, obj.GetName(), types.MergePatchType, data, metav1.PatchOptions{}, "status")
}

// fakeVersion is the version of a fake bundle: "x.v2" is "2.0.0".
func fakeVersion(bundle string) string {
	_, n, _ := strings.Cut(bundle, ".v")
	return n + ".0.0"
}

func (v *fakeV1) reconcileExtension(ctx context.Context, ce *unstructured.Unstructured) {
	pkg, _, _ := unstructured.NestedString(ce.Object, "spec", "source", "catalog", "packageName")
	version, _, _ := unstructured.NestedString(ce.Object, "spec", "source", "catalog", "version")
	ns, _, _ := unstructured.NestedString(ce.Object, "spec", "namespace")
	op, ok := v.f.operators[pkg]
	if ok && op.silent {
		return
	}
	v.mu.Lock()
	serving := v.serving
	v.mu.Unlock()
	if serving == "" {
		return
	}
	versions := op.versions
	if v.f.baseImage != "" && serving == v.f.baseImage {
		versions = versions[:op.inBase]
	}
	bundle := ""
	for _, b := range versions {
		if version == "" || fakeVersion(b) == version {
			bundle = b
		}
	}
	old, _, _ := unstructured.NestedMap(ce.Object, "status")
	status := map[string]any{}
	if inst, ok := old["install"]; ok {
		status["install"] = inst // an installed release stays while a new version is not installable
	}
	switch {
	case op.blocked != "":
		status["conditions"] = []any{cond("Installed", "False", "Failed", op.blocked), cond("Progressing", "False", "Blocked", op.blocked)}
	case op.retrying != "":
		status["conditions"] = []any{cond("Installed", "False", "Failed", op.retrying), cond("Progressing", "True", "Retrying", op.retrying)}
	case bundle == "":
		msg := `no bundles found for package "` + pkg + `" matching version "` + version + `"`
		if _, installed := status["install"]; installed {
			status["conditions"] = []any{cond("Installed", "True", "Succeeded", "Installed bundle (an older version) successfully"), cond("Progressing", "True", "Retrying", msg)}
		} else {
			status["conditions"] = []any{cond("Installed", "False", "Failed", msg), cond("Progressing", "True", "Retrying", msg)}
		}
	default:
		status["install"] = map[string]any{"bundle": map[string]any{"name": bundle, "version": fakeVersion(bundle)}}
		status["conditions"] = []any{cond("Installed", "True", "Succeeded", "Installed bundle catalogbot.local/"+bundle+"@sha256:00 successfully"), cond("Progressing", "True", "Succeeded", "Desired state reached")}
		v.patchStatus(ctx, gvrClusterExtension, ce, status)
		v.release(ctx, ce.GetName(), ns, pkg, op)
		return
	}
	v.patchStatus(ctx, gvrClusterExtension, ce, status)
}

// release creates the Deployment of the installed release (once): available, or not when the operator
// crash-loops or is unavailable.
func (v *fakeV1) release(ctx context.Context, owner, ns, pkg string, op fakeOperator) {
	if op.privileged {
		v.f.privilegedOperator(ctx, ns, pkg+"-controller-manager", map[string]string{ownerNameLabel: owner})
		return
	}
	one := int32(1)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: pkg + "-controller-manager", Namespace: ns, Labels: map[string]string{ownerNameLabel: owner}},
		Spec:       appsv1.DeploymentSpec{Replicas: &one},
		Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}},
	}
	if op.crash || op.unavailable {
		d.Status.ReadyReplicas, d.Status.AvailableReplicas = 0, 0
		d.Status.Conditions = []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"}}
	}
	if _, err := v.f.kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) || err != nil {
		return
	}
	if op.crash {
		v.f.crashPod(ctx, ns, pkg)
	}
}
