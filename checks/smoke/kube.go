package smoke

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// clients are the clients Run uses: core for Kubernetes' own objects, dynamic for OLM's.
type clients struct {
	core coreAPI
	dyn  dynamic.Interface
	// apply applies manifests (OLM install); nil on fakes that never install OLM.
	apply applier
}

var (
	gvrCatalogSource = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "catalogsources"}
	gvrSubscription  = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "subscriptions"}
	gvrInstallPlan   = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "installplans"}
	gvrCSV           = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1alpha1", Resource: "clusterserviceversions"}
	gvrOperatorGroup = schema.GroupVersionResource{Group: "operators.coreos.com", Version: "v1", Resource: "operatorgroups"}
	gvrCRD           = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func newClients(kubeconfig []byte) (*clients, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	cfg.Timeout = 30 * time.Second
	raw, err := newRawClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes REST client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("dynamic client: %w", err)
	}
	return &clients{core: &dynCore{dyn: dyn, raw: raw}, dyn: dyn, apply: &serverApplier{dyn: dyn, discover: discoveryClient(raw)}}, nil
}

func toUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: m}, nil
}

func fromUnstructuredMap(m map[string]any, out any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, out)
}

func fromUnstructured[T any](u *unstructured.Unstructured) (*T, error) {
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return out, nil
}

// getTyped reads one OLM object into its typed form.
func getTyped[T any](ctx context.Context, c *clients, gvr schema.GroupVersionResource, ns, name string) (*T, error) {
	u, err := c.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metaGet)
	if err != nil {
		return nil, err
	}
	return fromUnstructured[T](u)
}

// pollEvery is the status-polling period of every wait (tests shorten it).
var pollEvery = time.Second

// poll calls fn every interval until it reports done, returns an error, or ctx ends. It returns the
// last "still waiting because" text with ctx's error so a timeout says what it was waiting for.
func poll(ctx context.Context, interval time.Duration, fn func(ctx context.Context) (done bool, waiting string, err error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := ""
	for {
		done, waiting, err := fn(ctx)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if waiting != "" {
			last = waiting
		}
		select {
		case <-ctx.Done():
			if last != "" {
				return fmt.Errorf("%s: %w", last, context.Cause(ctx))
			}
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
