package smoke

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// Bounds of the controller log lines a failure report carries.
const (
	controllerLogTail  = 2000    // lines read from the end of each controller container's log
	controllerLogBytes = 1 << 20 // bytes read at most per container
	controllerLogLines = 40      // matching lines kept per container
)

// boundedDiagnostics runs fn with its own deadline, also after ctx ended: a timed-out install still
// gets explained.
func boundedDiagnostics(ctx context.Context, fn func(ctx context.Context) []diag.Diagnostic) []diag.Diagnostic {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return fn(dctx)
}

// collectV1Diagnostics gathers what explains a failed OLM v1 install of pkg: the ClusterExtension's
// conditions and installed bundle, the ClusterCatalog's conditions, the namespace's events, pod statuses
// with the logs of failing containers, and the controllers' log lines about the package. Each piece is
// bounded; a piece that cannot be read becomes a note saying so.
func collectV1Diagnostics(ctx context.Context, c *clients, pkg, name, ns string) []diag.Diagnostic {
	d := diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: "clusterextension", Package: pkg}
	if ce, err := getV1Object(ctx, c, gvrClusterExtension, name); err != nil {
		d.Message = fmt.Sprintf("ClusterExtension %s: %v", name, err)
	} else {
		installed := "none"
		if inst := ce.Status.Install; inst != nil {
			installed = fmt.Sprintf("%s (version %s)", inst.Bundle.Name, inst.Bundle.Version)
		}
		d.Message = capText(fmt.Sprintf("ClusterExtension %s: installed bundle %s; %s", name, installed, ce.conditionsText()), maxMessage)
	}
	out := []diag.Diagnostic{d}
	out = append(out, clusterCatalogDiagnostics(ctx, c, pkg)...)
	out = append(out, eventsDiagnostic(ctx, c, pkg, ns))
	out = append(out, podDiagnostics(ctx, c, pkg, ns, false)...)
	out = append(out, controllerLogDiagnostics(ctx, c, pkg, []string{name, pkg})...)
	return out
}

// controllerLogDiagnostics keeps the last log lines of OLM v1's controllers (the containers of the pods
// in olmv1Namespace) that mention any of needles: what catalogd and operator-controller said about the
// package or catalog.
func controllerLogDiagnostics(ctx context.Context, c *clients, pkg string, needles []string) []diag.Diagnostic {
	pods, err := c.core.listPods(ctx, olmv1Namespace, metav1.ListOptions{})
	if err != nil {
		return []diag.Diagnostic{{Severity: diag.Note, Check: "smoke", Rule: "controller-log", Package: pkg, Message: fmt.Sprintf("pods of namespace %s: %v", olmv1Namespace, err)}}
	}
	var out []diag.Diagnostic
	for i, p := range pods.Items {
		if i == maxPodsShown {
			break
		}
		for _, ctr := range p.Spec.Containers {
			lines, err := matchingLogLines(ctx, c, p.Name, ctr.Name, needles)
			msg := ""
			switch {
			case err != nil:
				msg = fmt.Sprintf("logs of container %s in pod %s/%s: %v", ctr.Name, olmv1Namespace, p.Name, err)
			case len(lines) == 0:
				continue
			default:
				msg = fmt.Sprintf("last %d log lines of container %s in pod %s/%s that mention %s:\n%s", len(lines), ctr.Name, olmv1Namespace, p.Name,
					strings.Join(needles, " or "), tailText(strings.Join(lines, "\n"), maxLog))
			}
			out = append(out, diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: "controller-log", Package: pkg, Message: msg})
		}
	}
	return out
}

// matchingLogLines reads the tail of a container's log (bounded in lines and bytes) and keeps the last
// controllerLogLines lines that contain one of needles.
func matchingLogLines(ctx context.Context, c *clients, pod, container string, needles []string) ([]string, error) {
	tail, limit := int64(controllerLogTail), int64(controllerLogBytes)
	rc, err := c.core.podLog(ctx, olmv1Namespace, pod, &corev1.PodLogOptions{Container: container, TailLines: &tail, LimitBytes: &limit})
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit))
	if err != nil {
		return nil, err
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), int(limit))
	for sc.Scan() {
		line := sc.Text()
		for _, n := range needles {
			if n != "" && strings.Contains(line, n) {
				out = append(out, capText(line, 1024))
				break
			}
		}
	}
	if len(out) > controllerLogLines {
		out = out[len(out)-controllerLogLines:]
	}
	return out, nil
}
