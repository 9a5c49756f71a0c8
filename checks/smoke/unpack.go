package smoke

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// bundleUnpackLabel is the label OLM puts on its bundle-unpack Jobs' pods (in the CatalogSource's
// namespace); their init container "pull" runs the bundle image.
const bundleUnpackLabel = "operatorframework.io/bundle-unpack-ref"

// unpullable are the waiting reasons of a container whose image the kubelet cannot get.
var unpullable = map[string]bool{"ImagePullBackOff": true, "ErrImageNeverPull": true, "InvalidImageName": true}

// unpackPods are the bundle-unpack pods of catalogNS that run one of pkg's bundle images, with the
// bundle each unpacks.
func unpackPods(ctx context.Context, c *clients, catalogNS, pkg string, images map[string]BundleRef) ([]corev1.Pod, []BundleRef, error) {
	if len(images) == 0 {
		return nil, nil, nil
	}
	list, err := c.core.listPods(ctx, catalogNS, metav1.ListOptions{LabelSelector: bundleUnpackLabel})
	if err != nil {
		return nil, nil, fmt.Errorf("listing bundle-unpack pods in %s: %w", catalogNS, err)
	}
	var pods []corev1.Pod
	var refs []BundleRef
	for _, p := range list.Items {
		for _, ctr := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
			if ref, ok := images[ctr.Image]; ok && ref.Package == pkg {
				pods = append(pods, p)
				refs = append(refs, ref)
				break
			}
		}
	}
	return pods, refs, nil
}

// unpackProblem returns a failure when an unpack pod of one of pkg's bundles cannot pull the bundle
// image or has a container that exited non-zero: OLM itself only notices after the Job's deadline (ten
// minutes by default) or its retries, and then without naming the bundle.
func unpackProblem(ctx context.Context, c *clients, catalogNS, pkg string, images map[string]BundleRef) error {
	pods, refs, err := unpackPods(ctx, c, catalogNS, pkg, images)
	if err != nil {
		return nil // a status read that failed is retried by the next poll
	}
	for i, p := range pods {
		ref := refs[i]
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if w := cs.State.Waiting; w != nil && unpullable[w.Reason] {
				return &failure{rule: "bundle-image-unpullable", bundle: ref.Bundle, msg: fmt.Sprintf(
					"bundle %s of package %s: its image %s cannot be pulled by the cluster (bundle-unpack pod %s/%s, container %s: %s: %s)",
					ref.Bundle, pkg, cs.Image, catalogNS, p.Name, cs.Name, w.Reason, strings.TrimSpace(w.Message))}
			}
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				return &failure{rule: "unpack-failed", bundle: ref.Bundle, msg: fmt.Sprintf(
					"bundle %s of package %s: OLM's bundle-unpack pod %s/%s failed: container %s exited %d (%s): %s",
					ref.Bundle, pkg, catalogNS, p.Name, cs.Name, t.ExitCode, t.Reason, capText(strings.TrimSpace(t.Message), 1024))}
			}
		}
	}
	return nil
}

// unpackDiagnostics describes the unpack pods of pkg's bundles, with the logs of their containers that
// did not finish well.
func unpackDiagnostics(ctx context.Context, c *clients, pkg, catalogNS string, images map[string]BundleRef) []diag.Diagnostic {
	pods, refs, err := unpackPods(ctx, c, catalogNS, pkg, images)
	if err != nil {
		return []diag.Diagnostic{{Severity: diag.Note, Check: "smoke", Rule: "unpack", Package: pkg, Message: err.Error()}}
	}
	var out []diag.Diagnostic
	for i, p := range pods {
		if i == maxPodsShown {
			break
		}
		var b strings.Builder
		fmt.Fprintf(&b, "bundle-unpack pod %s/%s of bundle %s: phase %s", catalogNS, p.Name, refs[i].Bundle, p.Status.Phase)
		var bad []string
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "\n    container %s (%s): %s", cs.Name, cs.Image, containerState(cs))
			if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
				bad = append(bad, cs.Name)
			}
		}
		out = append(out, diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: "unpack", Package: pkg, Bundle: refs[i].Bundle, Message: capText(b.String(), maxMessage)})
		for _, ctr := range bad {
			text, err := containerLog(ctx, c, catalogNS, p.Name, ctr, false)
			if err != nil {
				text = err.Error()
			}
			out = append(out, diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: "unpack-log", Package: pkg, Bundle: refs[i].Bundle,
				Message: fmt.Sprintf("last %d log lines of container %s in pod %s/%s:\n%s", logLines, ctr, catalogNS, p.Name, tailText(text, maxLog))})
		}
	}
	return out
}
