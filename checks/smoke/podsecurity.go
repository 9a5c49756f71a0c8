package smoke

import (
	"context"
	"fmt"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// The Pod Security Standards levels Run enforces on the namespaces it creates (Options.PodSecurity).
// "privileged" is not one of them: kind nodes are privileged containers, so a privileged pod or a
// hostPath of / in a smoke-installed operator reaches the machine running the smoke.
const (
	PodSecurityRestricted = "restricted"
	PodSecurityBaseline   = "baseline"
)

// podSecurityPrefix is the prefix of Pod Security Admission's namespace labels.
const podSecurityPrefix = "pod-security.kubernetes.io/"

// podSecurityLabels are the labels of every namespace Run creates: Pod Security Admission enforces
// level (and warns and audits at it) against the newest version of the standards the cluster knows.
func podSecurityLabels(level string) map[string]string {
	l := map[string]string{}
	for _, mode := range []string{"enforce", "warn", "audit"} {
		l[podSecurityPrefix+mode] = level
		l[podSecurityPrefix+mode+"-version"] = "latest"
	}
	return l
}

// psaViolation is what Pod Security Admission's refusals say, in the API's error, in a ReplicaSet's
// and its Deployment's ReplicaFailure condition and in the FailedCreate event.
const psaViolation = "violates PodSecurity"

// probePod is the pod Run asks the API server to create, as a dry run, in every namespace it created:
// privileged, with the node's / mounted and the host's network. Pod Security Admission refuses it at
// baseline and restricted; a cluster that admits it would admit the same from an operator.
func probePod(ns string) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "catalogbot-pod-security-probe", Namespace: ns, Labels: map[string]string{managedLabel: "true"}},
		Spec: corev1.PodSpec{
			HostNetwork: true,
			Containers: []corev1.Container{{Name: "probe", Image: "catalogbot.local/pod-security-probe:never-pulled",
				SecurityContext: &corev1.SecurityContext{Privileged: &yes},
				VolumeMounts:    []corev1.VolumeMount{{Name: "host", MountPath: "/host"}}}},
			Volumes: []corev1.Volume{{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}},
		},
	}
}

// checkEnforced proves that the cluster enforces Pod Security Admission in ns: the dry-run creation of
// probePod must be refused by it. A cluster that admits it (no PodSecurity admission plugin, or ns
// exempted) is refused: the smoke would run whatever a pull request's operator asks for there. Other
// refusals are waited out: the ServiceAccount admission plugin refuses every pod of a new namespace
// until its default ServiceAccount exists, before Pod Security Admission sees it.
func checkEnforced(ctx context.Context, c *clients, ns, level string) error {
	var admitted bool
	err := poll(ctx, pollEvery, func(ctx context.Context) (bool, string, error) {
		err := c.core.dryRunPod(ctx, probePod(ns))
		switch {
		case err == nil:
			admitted = true
			return true, "", nil
		case apierrors.IsForbidden(err) && strings.Contains(err.Error(), psaViolation):
			return true, "", nil
		}
		return false, fmt.Sprintf("the dry-run pod was refused for another reason than Pod Security: %v", err), nil
	})
	if err != nil {
		return fmt.Errorf("checking that namespace %s enforces the Pod Security Standard %q (dry-run pod): %w", ns, level, err)
	}
	if admitted {
		return diag.InfraError(&failure{rule: ruleNotEnforced, msg: fmt.Sprintf("namespace %s is labelled to enforce the Pod Security Standard %q, but the cluster admitted a privileged pod mounting the node's / (server-side dry run): it does not enforce Pod Security Admission there, so the smoke installs nothing in it (use a cluster with the PodSecurity admission plugin, Kubernetes 1.25 or later, that exempts no smoke namespace)", ns, level)})
	}
	return nil
}

// ruleNotEnforced is the rule of a package not installed because the cluster does not enforce Pod
// Security Admission in its namespace: the cluster's fault, so the run's verdict is infrastructure.
const ruleNotEnforced = "pod-security-not-enforced"

// admissionRefusal describes the pods of ns that Pod Security Admission refused to create, "" when
// none was: from the Deployments' ReplicaFailure conditions (which carry their ReplicaSet's), else from
// FailedCreate events (ReplicaSets, Jobs, StatefulSets, DaemonSets).
func admissionRefusal(ctx context.Context, c *clients, ns string) string {
	if deps, err := c.core.listDeployments(ctx, ns); err == nil {
		if s := deploymentRefusal(deps.Items); s != "" {
			return s
		}
	}
	evs, err := c.core.listEvents(ctx, ns)
	if err != nil {
		return ""
	}
	var out []string
	for _, e := range evs.Items {
		if e.Reason == "FailedCreate" && strings.Contains(e.Message, psaViolation) {
			out = append(out, fmt.Sprintf("%s %s/%s: %s", e.InvolvedObject.Kind, ns, e.InvolvedObject.Name, e.Message))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return ""
	}
	return out[0]
}

func deploymentRefusal(deps []appsv1.Deployment) string {
	sort.Slice(deps, func(i, j int) bool { return deps[i].Name < deps[j].Name })
	for _, d := range deps {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue && strings.Contains(c.Message, psaViolation) {
				return fmt.Sprintf("Deployment %s/%s: %s: %s", d.Namespace, d.Name, c.Reason, c.Message)
			}
		}
	}
	return ""
}

// podSecurityFailure is the lead failure of a package whose pods the admission refused.
func podSecurityFailure(pkg, bundle, level, refusal string) error {
	return &failure{rule: "pod-security", bundle: bundle, msg: fmt.Sprintf(
		"package %s, bundle %s: the cluster's Pod Security admission refused its pods (the smoke enforces the %q standard on the namespaces it creates; kind nodes are privileged containers, so privileged pods, host namespaces and hostPath volumes would reach the machine running the smoke): %s",
		pkg, bundle, level, refusal)}
}
