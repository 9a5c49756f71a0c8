package smoke

import (
	"context"
	"fmt"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
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

// waitCatalogReady waits for the CatalogSource's gRPC connection to be READY.
func waitCatalogReady(ctx context.Context, c *clients, ns string) error {
	return poll(ctx, pollEvery, func(ctx context.Context) (bool, string, error) {
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

// managedLabel marks every object Run creates, so a kept cluster shows what came from it.
const managedLabel = "catalogbot.io/smoke"
