package smoke

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/catalogbot/catalogbot/diag"
)

// olmCRDs must all exist for OLM to count as installed.
var olmCRDs = []string{
	"catalogsources.operators.coreos.com",
	"subscriptions.operators.coreos.com",
	"installplans.operators.coreos.com",
	"clusterserviceversions.operators.coreos.com",
	"operatorgroups.operators.coreos.com",
}

// olmDeployments are the operators whose availability Run waits for.
var olmDeployments = []string{"olm-operator", "catalog-operator"}

// olmPresent reports whether OLM's CRDs exist; a partial set is an error naming the missing ones.
func olmPresent(ctx context.Context, c *clients) (bool, error) {
	return crdsPresent(ctx, c, "OLM", olmCRDs)
}

// crdsPresent reports whether all of crds exist (false when none does); a partial set is an error that
// names what (OLM or OLM v1) is partly installed and the missing CRDs.
func crdsPresent(ctx context.Context, c *clients, what string, crds []string) (bool, error) {
	var missing []string
	for _, name := range crds {
		_, err := c.dyn.Resource(gvrCRD).Get(ctx, name, metaGet)
		switch {
		case apierrors.IsNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return false, fmt.Errorf("reading CRD %s: %w", name, err)
		}
	}
	switch len(missing) {
	case 0:
		return true, nil
	case len(crds):
		return false, nil
	default:
		return false, fmt.Errorf("%s is partly installed: CRDs %s are missing", what, strings.Join(missing, ", "))
	}
}

// installOLM applies the manifests of dir: namespaces and CRDs first, then (once the CRDs are
// established) everything else.
func installOLM(ctx context.Context, c *clients, dir string) error {
	objs, err := readManifests(dir)
	if err != nil {
		return diag.UsageError(err)
	}
	first, rest := splitFirst(objs)
	if err := c.apply.Apply(ctx, first); err != nil {
		return fmt.Errorf("installing OLM from %s: %w", dir, err)
	}
	for _, o := range first {
		if o.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if err := waitCRDEstablished(ctx, c, o.GetName()); err != nil {
			return err
		}
	}
	if err := c.apply.Apply(ctx, rest); err != nil {
		return fmt.Errorf("installing OLM from %s: %w", dir, err)
	}
	return nil
}

func waitCRDEstablished(ctx context.Context, c *clients, name string) error {
	return poll(ctx, pollEvery/2, func(ctx context.Context) (bool, string, error) {
		u, err := c.dyn.Resource(gvrCRD).Get(ctx, name, metaGet)
		if err != nil {
			return false, "CRD " + name + ": " + err.Error(), nil
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, x := range conds {
			m, _ := x.(map[string]any)
			if m["type"] == "Established" && m["status"] == "True" {
				return true, "", nil
			}
		}
		return false, "CRD " + name + " not established", nil
	})
}

// olmLocation is where OLM runs: the deployments' namespace and the global catalog namespace.
type olmLocation struct {
	Namespace       string
	GlobalNamespace string
}

// waitOLM waits until OLM's operators are available and returns where they run.
func waitOLM(ctx context.Context, c *clients) (olmLocation, error) {
	var loc olmLocation
	err := poll(ctx, pollEvery, func(ctx context.Context) (bool, string, error) {
		list, err := c.core.listDeployments(ctx, metav1.NamespaceAll)
		if err != nil {
			return false, "listing deployments: " + err.Error(), nil
		}
		found := map[string]*appsv1.Deployment{}
		for i := range list.Items {
			d := &list.Items[i]
			for _, n := range olmDeployments {
				if d.Name == n {
					found[n] = d
				}
			}
		}
		var waiting []string
		for _, n := range olmDeployments {
			d := found[n]
			switch {
			case d == nil:
				waiting = append(waiting, "deployment "+n+" not found")
			case !deploymentAvailable(d):
				waiting = append(waiting, fmt.Sprintf("deployment %s/%s not available (%d/%d ready)", d.Namespace, n, d.Status.ReadyReplicas, d.Status.Replicas))
			}
		}
		if len(waiting) > 0 {
			return false, "waiting for OLM: " + strings.Join(waiting, "; "), nil
		}
		co := found["catalog-operator"]
		loc = olmLocation{Namespace: co.Namespace, GlobalNamespace: globalNamespace(co)}
		return true, "", nil
	})
	return loc, err
}

func deploymentAvailable(d *appsv1.Deployment) bool {
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return d.Status.AvailableReplicas > 0
		}
	}
	return false
}

// globalNamespace reads the catalog operator's --namespace flag (OLM's global catalog namespace);
// without it OLM uses its own namespace.
func globalNamespace(d *appsv1.Deployment) string {
	for _, ctr := range d.Spec.Template.Spec.Containers {
		args := append(append([]string{}, ctr.Command...), ctr.Args...)
		for i, a := range args {
			a = strings.TrimLeft(a, "-")
			if v, ok := strings.CutPrefix(a, "namespace="); ok {
				return v
			}
			if a == "namespace" && i+1 < len(args) && args[i+1] != "" && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1]
			}
		}
	}
	return d.Namespace
}

var errNoOLM = errors.New("the cluster has no OLM and no OLM manifests were given")
