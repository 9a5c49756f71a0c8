package smoke

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// The fake OLM reacts to Run's writes before they return: every Create, Update, Patch or Apply Run makes
// through the dynamic client is followed by one step of the simulation (fakeCluster.step), as a real
// controller's watch would, but synchronously. So a state the simulation reaches by reacting to Run (an
// InstallPlan after a Subscription, a CSV after an approval, a ready catalog pod after a CatalogSource) is
// there at Run's next read, whatever the scheduler does with the simulation's own goroutine; a test's
// Timeout is then only ever spent on the wait the test is about (an upgrade never offered, an install
// that never succeeds), not on the steps before it. The goroutine still steps on its own (a controller
// that also acts between writes), and steps never overlap (fakeCluster.stepMu).

// stepAfterWrites is the dynamic client Run gets from the fake.
type stepAfterWrites struct {
	dynamic.Interface
	f *fakeCluster
}

func (d stepAfterWrites) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return stepResource{d.Interface.Resource(gvr), d.f}
}

type stepResource struct {
	dynamic.NamespaceableResourceInterface
	f *fakeCluster
}

func (r stepResource) Namespace(ns string) dynamic.ResourceInterface {
	return stepNamespaced{r.NamespaceableResourceInterface.Namespace(ns), r.f}
}

func (r stepResource) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.NamespaceableResourceInterface.Create(ctx, obj, opts, sub...))
}

func (r stepResource) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.NamespaceableResourceInterface.Update(ctx, obj, opts, sub...))
}

func (r stepResource) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.NamespaceableResourceInterface.Patch(ctx, name, pt, data, opts, sub...))
}

func (r stepResource) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.NamespaceableResourceInterface.Apply(ctx, name, obj, opts, sub...))
}

type stepNamespaced struct {
	dynamic.ResourceInterface
	f *fakeCluster
}

func (r stepNamespaced) Create(ctx context.Context, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.ResourceInterface.Create(ctx, obj, opts, sub...))
}

func (r stepNamespaced) Update(ctx context.Context, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.ResourceInterface.Update(ctx, obj, opts, sub...))
}

func (r stepNamespaced) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.ResourceInterface.Patch(ctx, name, pt, data, opts, sub...))
}

func (r stepNamespaced) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	return stepped(ctx, r.f)(r.ResourceInterface.Apply(ctx, name, obj, opts, sub...))
}

// stepped runs one simulation step after a successful write and passes the write's result on.
func stepped(ctx context.Context, f *fakeCluster) func(*unstructured.Unstructured, error) (*unstructured.Unstructured, error) {
	return func(u *unstructured.Unstructured, err error) (*unstructured.Unstructured, error) {
		if err == nil {
			f.step(context.WithoutCancel(ctx))
		}
		return u, err
	}
}
