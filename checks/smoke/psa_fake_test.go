package smoke

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// The fake cluster's Pod Security Admission: pods that ask for privileges, host namespaces or hostPath
// volumes are refused in namespaces labelled to enforce baseline or restricted, as the API server's
// PodSecurity plugin refuses them, and admitted elsewhere (or everywhere with fakeCluster.noAdmission,
// a cluster without the plugin).

// admitPods makes the fake clientset's pod creation go through the fake admission; dry runs store
// nothing.
func (f *fakeCluster) admitPods() {
	f.kube.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca, ok := a.(k8stesting.CreateActionImpl)
		if !ok {
			return false, nil, nil
		}
		pod, ok := ca.GetObject().(*corev1.Pod)
		if !ok {
			return false, nil, nil
		}
		// a new namespace has no default ServiceAccount for a moment: the ServiceAccount admission plugin
		// refuses its first pod (here: the first dry run, Run's probe) before Pod Security Admission sees it
		dryRun := len(ca.GetCreateOptions().DryRun) > 0
		f.mu.Lock()
		first := dryRun && !f.podsSeen[a.GetNamespace()]
		if f.podsSeen == nil {
			f.podsSeen = map[string]bool{}
		}
		f.podsSeen[a.GetNamespace()] = true
		f.mu.Unlock()
		if first {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
				fmt.Errorf("error looking up service account %s/default: serviceaccount \"default\" not found", a.GetNamespace()))
		}
		if refusal := f.podSecurityRefusal(a.GetNamespace(), pod.Name, hostile(pod.Spec)); refusal != "" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name, fmt.Errorf("%s", refusal))
		}
		if dryRun {
			return true, pod, nil
		}
		return false, nil, nil
	})
}

// hostile reports whether spec asks for what baseline forbids (the subset the tests use).
func hostile(spec corev1.PodSpec) bool {
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		return true
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			return true
		}
	}
	for _, c := range spec.Containers {
		if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
			return true
		}
	}
	return false
}

// podSecurityRefusal is the admission's refusal of pod in ns ("" = admitted).
func (f *fakeCluster) podSecurityRefusal(ns, pod string, isHostile bool) string {
	if !isHostile || f.noAdmission {
		return ""
	}
	// the tracker, not the clientset: reactors run under the clientset's lock
	obj, err := f.kube.Tracker().Get(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, "", ns)
	if err != nil {
		return ""
	}
	n, ok := obj.(*corev1.Namespace)
	if !ok {
		return ""
	}
	level := n.Labels[podSecurityPrefix+"enforce"]
	if level != PodSecurityBaseline && level != PodSecurityRestricted {
		return ""
	}
	return fmt.Sprintf(`pods %q is forbidden: violates PodSecurity "%s:latest": host namespaces (hostNetwork=true), privileged (container "operator" must not set securityContext.privileged=true), hostPath volumes (volume "host")`, pod, level)
}

// privilegedOperator creates the Deployment of an operator whose pod is privileged and mounts the node's /,
// as the cluster leaves it (once): refused by the admission (ReplicaFailure and a FailedCreate event, never
// available), or running, recorded in escaped. It reports whether the pods were refused.
func (f *fakeCluster) privilegedOperator(ctx context.Context, ns, name string, labels map[string]string) bool {
	if old, err := f.kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
		return deploymentRefusal([]appsv1.Deployment{*old}) != ""
	}
	yes, one := true, int32(1)
	spec := corev1.PodSpec{
		HostNetwork: true,
		Containers:  []corev1.Container{{Name: "operator", SecurityContext: &corev1.SecurityContext{Privileged: &yes}}},
		Volumes:     []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{Spec: spec}},
		Status: appsv1.DeploymentStatus{Replicas: 1, UpdatedReplicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}},
	}
	refusal := f.podSecurityRefusal(ns, name+"-5d8f9-x2x7q", hostile(spec))
	if refusal != "" {
		d.Status = appsv1.DeploymentStatus{Replicas: 0, Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse, Reason: "MinimumReplicasUnavailable"},
			{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: refusal}}}
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + ".failedcreate", Namespace: ns},
			InvolvedObject: corev1.ObjectReference{Kind: "ReplicaSet", Name: name + "-5d8f9"}, Type: "Warning", Reason: "FailedCreate",
			Message: "Error creating: " + refusal, Count: 12, LastTimestamp: metav1.Now()}
		f.kube.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	} else {
		f.mu.Lock()
		f.escaped = append(f.escaped, ns)
		f.mu.Unlock()
	}
	f.kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	return refusal != ""
}
