package smoke

import (
	"context"
	"io"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// typedCore is coreAPI over client-go's typed clientset: the fake cluster's, whose simulation of OLM
// creates pods, events and deployments with client-go's in-memory clientset. (The product serves
// coreAPI with dynCore: see core_test.go.)
type typedCore struct{ k kubernetes.Interface }

func (c typedCore) listPods(ctx context.Context, ns string, opts metav1.ListOptions) (*corev1.PodList, error) {
	return c.k.CoreV1().Pods(ns).List(ctx, opts)
}

func (c typedCore) listEvents(ctx context.Context, ns string) (*corev1.EventList, error) {
	return c.k.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
}

func (c typedCore) podLog(ctx context.Context, ns, pod string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return c.k.CoreV1().Pods(ns).GetLogs(pod, opts).Stream(ctx)
}

func (c typedCore) listDeployments(ctx context.Context, ns string) (*appsv1.DeploymentList, error) {
	return c.k.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
}

func (c typedCore) createNamespace(ctx context.Context, ns *corev1.Namespace) error {
	_, err := c.k.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: fieldManager})
	return err
}

func (c typedCore) getNamespace(ctx context.Context, name string) (*corev1.Namespace, error) {
	return c.k.CoreV1().Namespaces().Get(ctx, name, metaGet)
}

func (c typedCore) deleteNamespace(ctx context.Context, name string) error {
	return c.k.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
}

func (c typedCore) dryRunPod(ctx context.Context, pod *corev1.Pod) error {
	_, err := c.k.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldManager: fieldManager})
	return err
}
