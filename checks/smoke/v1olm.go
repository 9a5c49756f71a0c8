package smoke

import (
	"context"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/catalogbot/catalogbot/diag"
)

var (
	gvrClusterCatalog   = schema.GroupVersionResource{Group: "olm.operatorframework.io", Version: "v1", Resource: "clustercatalogs"}
	gvrClusterExtension = schema.GroupVersionResource{Group: "olm.operatorframework.io", Version: "v1", Resource: "clusterextensions"}
)

// olmv1CRDs must all exist for OLM v1 to count as installed.
var olmv1CRDs = []string{
	"clustercatalogs.olm.operatorframework.io",
	"clusterextensions.olm.operatorframework.io",
}

// olmv1Namespace is where OLM v1's controllers run (the upstream manifests' namespace).
const olmv1Namespace = "olmv1-system"

// olmv1Controllers name the Deployments of olmv1Namespace Run waits for: one whose name contains each.
var olmv1Controllers = []string{"catalogd", "operator-controller"}

var errNoOLMv1 = errors.New("the cluster has no OLM v1 (no ClusterCatalog CRD) and no OLM v1 manifests were given")

// olmv1Present reports whether OLM v1's CRDs exist; a partial set is an error naming the missing ones.
func olmv1Present(ctx context.Context, c *clients) (bool, error) {
	return crdsPresent(ctx, c, "OLM v1", olmv1CRDs)
}

// ensureOLMv1 installs OLM v1 from dir when the cluster lacks it and waits for its controllers. It
// reports whether it installed.
func ensureOLMv1(ctx context.Context, c *clients, dir string, p *progress) (installed bool, err error) {
	present, err := olmv1Present(ctx, c)
	if err != nil {
		return false, err
	}
	if !present {
		if dir == "" {
			return false, diag.UsageError(errNoOLMv1)
		}
		p.printf("OLM v1 not found; installing it from %s", dir)
		if err := installOLM(ctx, c, dir); err != nil {
			return false, fmt.Errorf("OLM v1: %w", err)
		}
		installed = true
	}
	return installed, waitOLMv1(ctx, c)
}

// waitOLMv1 waits until every Deployment of olmv1Namespace is available, among them catalogd's and
// operator-controller's.
func waitOLMv1(ctx context.Context, c *clients) error {
	return poll(ctx, pollEvery, func(ctx context.Context) (bool, string, error) {
		list, err := c.core.listDeployments(ctx, olmv1Namespace)
		if err != nil {
			return false, "listing deployments of " + olmv1Namespace + ": " + err.Error(), nil
		}
		var waiting []string
		for _, want := range olmv1Controllers {
			found := false
			for _, d := range list.Items {
				found = found || strings.Contains(d.Name, want)
			}
			if !found {
				waiting = append(waiting, fmt.Sprintf("no %s deployment in namespace %s", want, olmv1Namespace))
			}
		}
		for i := range list.Items {
			d := &list.Items[i]
			if !deploymentAvailable(d) {
				waiting = append(waiting, fmt.Sprintf("deployment %s/%s not available (%d/%d ready)", d.Namespace, d.Name, d.Status.ReadyReplicas, d.Status.Replicas))
			}
		}
		if len(waiting) > 0 {
			return false, "waiting for OLM v1: " + strings.Join(waiting, "; "), nil
		}
		return true, "", nil
	})
}

// v1Object is what Run reads of a ClusterCatalog or ClusterExtension.
type v1Object struct {
	metav1.ObjectMeta `json:"metadata"`
	Status            v1Status `json:"status"`
}

type v1Status struct {
	Conditions     []metav1.Condition `json:"conditions,omitempty"`
	ResolvedSource *struct {
		Image *struct {
			Ref string `json:"ref"`
		} `json:"image,omitempty"`
	} `json:"resolvedSource,omitempty"`
	Install *struct {
		Bundle struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"bundle"`
	} `json:"install,omitempty"`
}

// condition returns the condition of type t, or nil.
func (o *v1Object) condition(t string) *metav1.Condition {
	for i := range o.Status.Conditions {
		if o.Status.Conditions[i].Type == t {
			return &o.Status.Conditions[i]
		}
	}
	return nil
}

// conditionsText lists the conditions, one per line, for messages and diagnostics.
func (o *v1Object) conditionsText() string {
	if len(o.Status.Conditions) == 0 {
		return "no conditions yet"
	}
	var b strings.Builder
	for i, c := range o.Status.Conditions {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s=%s %s: %s", c.Type, c.Status, c.Reason, strings.TrimSpace(c.Message))
	}
	return b.String()
}

// current says whether cond was written for the object's current spec (the controllers set
// observedGeneration on their conditions).
func (o *v1Object) current(cond *metav1.Condition) bool {
	return cond != nil && cond.ObservedGeneration >= o.Generation
}

func getV1Object(ctx context.Context, c *clients, gvr schema.GroupVersionResource, name string) (*v1Object, error) {
	return getTyped[v1Object](ctx, c, gvr, "", name)
}
