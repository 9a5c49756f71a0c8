package smoke

import (
	"context"
	"fmt"
	"io"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// coreAPI is what Run reads and writes of Kubernetes' own objects. It is served by the dynamic client
// and a plain REST client (dynCore), not by client-go's typed clientset: the clientset's packages and
// its discovery client register every Kubernetes API type in client-go's scheme at init, which cost
// every run of catalogbot, whatever the verb, about 9 ms of start-up (see docs/benchmarks.md (start-up)).
type coreAPI interface {
	listPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error)
	listEvents(ctx context.Context, ns string) (*corev1.EventList, error)
	// podLog streams a container's log; the caller closes it.
	podLog(ctx context.Context, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error)
	// listDeployments lists the deployments of ns (metav1.NamespaceAll: of every namespace).
	listDeployments(ctx context.Context, ns string) (*appsv1.DeploymentList, error)
	createNamespace(ctx context.Context, ns *corev1.Namespace) error
	getNamespace(ctx context.Context, name string) (*corev1.Namespace, error)
	deleteNamespace(ctx context.Context, name string) error
	// dryRunPod asks the API server to create pod as a dry run (admission runs, nothing is stored).
	dryRunPod(ctx context.Context, pod *corev1.Pod) error
}

var (
	gvrPod        = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	gvrEvent      = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	gvrNamespace  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	gvrDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// dynCore is coreAPI over the dynamic client; raw serves what is not an object (pod logs, discovery).
type dynCore struct {
	dyn dynamic.Interface
	raw rest.Interface
}

// newRawClient is a REST client for absolute paths (/api/v1/..., /apis/...) with cfg's server and
// credentials.
func newRawClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := dynamic.ConfigFor(cfg)
	c.GroupVersion = nil
	c.APIPath = ""
	return rest.UnversionedRESTClientFor(c)
}

func listTyped[T any](ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*T, error) {
	ul, err := dyn.Resource(gvr).Namespace(ns).List(ctx, opts)
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := fromUnstructuredMap(ul.UnstructuredContent(), out); err != nil {
		return nil, fmt.Errorf("decoding the list of %s in namespace %q: %w", gvr.Resource, ns, err)
	}
	return out, nil
}

func (c *dynCore) listPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error) {
	return listTyped[corev1.PodList](ctx, c.dyn, gvrPod, ns, opts)
}

func (c *dynCore) listEvents(ctx context.Context, ns string) (*corev1.EventList, error) {
	return listTyped[corev1.EventList](ctx, c.dyn, gvrEvent, ns, metav1.ListOptions{})
}

func (c *dynCore) listDeployments(ctx context.Context, ns string) (*appsv1.DeploymentList, error) {
	return listTyped[appsv1.DeploymentList](ctx, c.dyn, gvrDeployment, ns, metav1.ListOptions{})
}

func (c *dynCore) podLog(ctx context.Context, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	req := c.raw.Get().AbsPath("/api/v1/namespaces", ns, "pods", pod, "log")
	if opts.Container != "" {
		req = req.Param("container", opts.Container)
	}
	if opts.Previous {
		req = req.Param("previous", "true")
	}
	if opts.TailLines != nil {
		req = req.Param("tailLines", strconv.FormatInt(*opts.TailLines, 10))
	}
	if opts.LimitBytes != nil {
		req = req.Param("limitBytes", strconv.FormatInt(*opts.LimitBytes, 10))
	}
	return req.Stream(ctx)
}

func (c *dynCore) createNamespace(ctx context.Context, ns *corev1.Namespace) error {
	obj := ns.DeepCopy()
	obj.APIVersion, obj.Kind = "v1", "Namespace"
	u, err := toUnstructured(obj)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", ns.Name, err)
	}
	_, err = c.dyn.Resource(gvrNamespace).Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
	return err
}

func (c *dynCore) getNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	u, err := c.dyn.Resource(gvrNamespace).Get(ctx, name, metaGet)
	if err != nil {
		return nil, err
	}
	return fromUnstructured[corev1.Namespace](u)
}

func (c *dynCore) deleteNamespace(ctx context.Context, name string) error {
	return c.dyn.Resource(gvrNamespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func (c *dynCore) dryRunPod(ctx context.Context, pod *corev1.Pod) error {
	u, err := toUnstructured(pod)
	if err != nil {
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	_, err = c.dyn.Resource(gvrPod).Namespace(pod.Namespace).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager})
	return err
}
