package smoke

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/catalogbot/catalogbot/diag"
)

// ClusterCatalogName is the name of the ClusterCatalog Run creates (OLM v1).
const ClusterCatalogName = "catalogbot-smoke"

// catalogNameLabel is the label catalogd's webhook sets on every ClusterCatalog; Run presets it (so the
// webhook has nothing to do) and selects the catalog under test by it.
const catalogNameLabel = "olm.operatorframework.io/metadata.name"

// applyClusterCatalog creates the ClusterCatalog serving image, or points an existing one Run created
// at image. A ClusterCatalog of that name that Run did not create is never taken over.
func applyClusterCatalog(ctx context.Context, c *clients, image string) error {
	cc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
		"metadata": map[string]any{"name": ClusterCatalogName, "labels": map[string]any{catalogNameLabel: ClusterCatalogName, managedLabel: "true"}},
		"spec":     map[string]any{"source": map[string]any{"type": "Image", "image": map[string]any{"ref": image}}},
	}}
	ri := c.dyn.Resource(gvrClusterCatalog)
	old, err := ri.Get(ctx, ClusterCatalogName, metaGet)
	switch {
	case apierrors.IsNotFound(err):
		_, err = ri.Create(ctx, cc, metav1.CreateOptions{FieldManager: fieldManager})
	case err == nil:
		if old.GetLabels()[managedLabel] != "true" {
			return diag.UsageError(fmt.Errorf("ClusterCatalog %s exists and was not created by catalogbot smoke", ClusterCatalogName))
		}
		cc.SetResourceVersion(old.GetResourceVersion())
		_, err = ri.Update(ctx, cc, metav1.UpdateOptions{FieldManager: fieldManager})
	}
	if err != nil {
		return fmt.Errorf("creating ClusterCatalog %s: %w", ClusterCatalogName, err)
	}
	return nil
}

// waitClusterCatalogServing waits until the ClusterCatalog serves image: Serving=True with image's
// digest resolved. Progressing=False (Blocked: catalogd gave up, e.g. an image without the catalog
// label) ends the wait at once.
func waitClusterCatalogServing(ctx context.Context, c *clients, image string) error {
	want := digestOf(image)
	return poll(ctx, pollEvery, func(ctx context.Context) (bool, string, error) {
		cc, err := getV1Object(ctx, c, gvrClusterCatalog, ClusterCatalogName)
		if err != nil {
			return false, "reading ClusterCatalog " + ClusterCatalogName + ": " + err.Error(), nil
		}
		if p := cc.condition("Progressing"); cc.current(p) && p.Status == metav1.ConditionFalse {
			return false, "", fmt.Errorf("ClusterCatalog %s cannot serve %s: Progressing=False %s: %s", ClusterCatalogName, image, p.Reason, strings.TrimSpace(p.Message))
		}
		resolved := ""
		if rs := cc.Status.ResolvedSource; rs != nil && rs.Image != nil {
			resolved = rs.Image.Ref
		}
		if s := cc.condition("Serving"); s != nil && s.Status == metav1.ConditionTrue && resolved != "" && digestOf(resolved) == want {
			return true, "", nil
		}
		return false, fmt.Sprintf("ClusterCatalog %s does not serve %s yet (resolved %q): %s", ClusterCatalogName, image, resolved, cc.conditionsText()), nil
	})
}

// digestOf is the sha256:... part of a reference by digest ("" without one).
func digestOf(ref string) string {
	if _, d, ok := strings.Cut(ref, "@"); ok {
		return d
	}
	return ""
}

// clusterCatalogDiagnostics describes the ClusterCatalog and the catalogd log lines about it.
func clusterCatalogDiagnostics(ctx context.Context, c *clients, pkg string) []diag.Diagnostic {
	d := diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: "clustercatalog", Package: pkg}
	if cc, err := getV1Object(ctx, c, gvrClusterCatalog, ClusterCatalogName); err != nil {
		d.Message = fmt.Sprintf("ClusterCatalog %s: %v", ClusterCatalogName, err)
	} else {
		resolved := ""
		if rs := cc.Status.ResolvedSource; rs != nil && rs.Image != nil {
			resolved = rs.Image.Ref
		}
		d.Message = capText(fmt.Sprintf("ClusterCatalog %s: resolved %q; %s", ClusterCatalogName, resolved, cc.conditionsText()), maxMessage)
	}
	return []diag.Diagnostic{d}
}
