package smoke

import (
	"context"
	"fmt"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CatalogSourceName is the name of the CatalogSource Run creates.
const CatalogSourceName = "catalogbot-smoke"

// createCatalogSource creates (or replaces the spec of) the CatalogSource serving image.
func createCatalogSource(ctx context.Context, c *clients, ns, image string) error {
	cs := &v1alpha1.CatalogSource{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "CatalogSource"},
		ObjectMeta: metav1.ObjectMeta{Name: CatalogSourceName, Namespace: ns, Labels: map[string]string{managedLabel: "true"}},
		Spec: v1alpha1.CatalogSourceSpec{
			SourceType:  v1alpha1.SourceTypeGrpc,
			Image:       image,
			DisplayName: "catalogbot smoke test",
			Publisher:   "catalogbot",
		},
	}
	u, err := toUnstructured(cs)
	if err != nil {
		return fmt.Errorf("CatalogSource %s/%s: %w", ns, CatalogSourceName, err)
	}
	ri := c.dyn.Resource(gvrCatalogSource).Namespace(ns)
	old, err := ri.Get(ctx, CatalogSourceName, metaGet)
	switch {
	case apierrors.IsNotFound(err):
		_, err = ri.Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
	case err == nil:
		u.SetResourceVersion(old.GetResourceVersion())
		_, err = ri.Update(ctx, u, metav1.UpdateOptions{FieldManager: fieldManager})
	}
	if err != nil {
		return fmt.Errorf("creating CatalogSource %s/%s: %w", ns, CatalogSourceName, err)
	}
	return nil
}

// waitCatalogServing waits until every pod of the CatalogSource runs image and is ready, and the
// CatalogSource's gRPC connection is READY. After the image changed, OLM replaces the pod: the old pod's
// READY connection does not count.
func waitCatalogServing(ctx context.Context, c *clients, ns, image string) error {
	return poll(ctx, pollEvery, func(ctx context.Context) (bool, string, error) {
		pods, err := c.core.listPods(ctx, ns, metav1.ListOptions{LabelSelector: "olm.catalogSource=" + CatalogSourceName})
		if err != nil {
			return false, "listing catalog pods: " + err.Error(), nil
		}
		ready := 0
		for _, p := range pods.Items {
			if len(p.Spec.Containers) == 0 || p.Spec.Containers[0].Image != image {
				return false, fmt.Sprintf("catalog pod %s/%s still runs %s", ns, p.Name, firstImage(p)), nil
			}
			if podReady(p) {
				ready++
			}
		}
		if ready == 0 {
			return false, fmt.Sprintf("no ready pod of CatalogSource %s/%s runs %s yet (%d pods)", ns, CatalogSourceName, image, len(pods.Items)), nil
		}
		cs, err := getTyped[v1alpha1.CatalogSource](ctx, c, gvrCatalogSource, ns, CatalogSourceName)
		if err != nil {
			return false, "reading CatalogSource: " + err.Error(), nil
		}
		st := cs.Status.GRPCConnectionState
		if st == nil {
			return false, fmt.Sprintf("CatalogSource %s/%s has no connection state yet", ns, CatalogSourceName), nil
		}
		if st.LastObservedState == "READY" {
			return true, "", nil
		}
		return false, fmt.Sprintf("CatalogSource %s/%s connection is %s", ns, CatalogSourceName, st.LastObservedState), nil
	})
}

func firstImage(p corev1.Pod) string {
	if len(p.Spec.Containers) == 0 {
		return "no container"
	}
	return p.Spec.Containers[0].Image
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// managedLabel marks every object Run creates, so a kept cluster shows what came from it.
const managedLabel = "catalogbot.io/smoke"
