package smoke

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// Size bounds of what a failure report carries.
const (
	maxMessage   = 4 << 10 // one status or event summary
	maxLog       = 8 << 10 // one container's log tail
	logLines     = 50
	maxEvents    = 30
	maxPodsShown = 10
)

// capText keeps at most limit bytes of s, cutting at a rune boundary and saying how much was cut.
func capText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && (s[cut]&0xC0) == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n... (%d more bytes cut)", len(s)-cut)
}

// tailText keeps the last limit bytes of s (logs: the end matters).
func tailText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	start := len(s) - limit
	for start < len(s) && (s[start]&0xC0) == 0x80 {
		start++
	}
	return fmt.Sprintf("(... %d earlier bytes cut)\n", start) + s[start:]
}

// collectDiagnostics gathers what explains a failed install in ns: Subscription, InstallPlan and CSV
// status, the bundle-unpack pods of its bundles, namespace events, pod statuses with the logs of failing
// containers, and catalog pod logs.
// Each piece is bounded; a piece that cannot be read becomes a note saying so.
func collectDiagnostics(ctx context.Context, c *clients, pkg, ns, catalogNS string, images map[string]BundleRef) []diag.Diagnostic {
	var out []diag.Diagnostic
	note := func(rule, msg string) {
		out = append(out, diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: rule, Package: pkg, Message: msg})
	}
	if sub, err := getTyped[v1alpha1.Subscription](ctx, c, gvrSubscription, ns, pkg); err != nil {
		note("subscription", fmt.Sprintf("Subscription %s/%s: %v", ns, pkg, err))
	} else {
		var b strings.Builder
		fmt.Fprintf(&b, "Subscription %s/%s: state %q, currentCSV %q, installedCSV %q", ns, pkg, sub.Status.State, sub.Status.CurrentCSV, sub.Status.InstalledCSV)
		for _, cond := range sub.Status.Conditions {
			fmt.Fprintf(&b, "\n  %s=%s %s: %s", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
		note("subscription", capText(b.String(), maxMessage))
	}
	if list, err := c.dyn.Resource(gvrInstallPlan).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil {
		note("installplan", fmt.Sprintf("InstallPlans in %s: %v", ns, err))
	} else {
		for i := range list.Items {
			ip, err := fromUnstructured[v1alpha1.InstallPlan](&list.Items[i])
			if err != nil {
				note("installplan", err.Error())
				continue
			}
			note("installplan", capText(fmt.Sprintf("InstallPlan %s/%s: phase %q, approved %t, CSVs %s %s", ns, ip.Name, ip.Status.Phase,
				ip.Spec.Approved, strings.Join(ip.Spec.ClusterServiceVersionNames, ","), installPlanMessage(ip)), maxMessage))
		}
	}
	if list, err := c.dyn.Resource(gvrCSV).Namespace(ns).List(ctx, metav1.ListOptions{}); err != nil {
		note("csv", fmt.Sprintf("CSVs in %s: %v", ns, err))
	} else {
		for i := range list.Items {
			csv, err := fromUnstructured[v1alpha1.ClusterServiceVersion](&list.Items[i])
			if err != nil {
				note("csv", err.Error())
				continue
			}
			if csv.Labels["olm.copiedFrom"] != "" {
				continue // a copy of another namespace's operator (AllNamespaces groups): not this package
			}
			var b strings.Builder
			fmt.Fprintf(&b, "CSV %s/%s: phase %q reason %q: %s", ns, csv.Name, csv.Status.Phase, csv.Status.Reason, csv.Status.Message)
			conds := csv.Status.Conditions
			if len(conds) > 8 {
				conds = conds[len(conds)-8:]
			}
			for _, cond := range conds {
				fmt.Fprintf(&b, "\n  %s %s: %s", cond.Phase, cond.Reason, cond.Message)
			}
			note("csv", capText(b.String(), maxMessage))
		}
	}
	out = append(out, unpackDiagnostics(ctx, c, pkg, catalogNS, images)...)
	out = append(out, eventsDiagnostic(ctx, c, pkg, ns))
	out = append(out, podDiagnostics(ctx, c, pkg, ns, false)...)
	out = append(out, podDiagnostics(ctx, c, pkg, catalogNS, true)...)
	return out
}

func eventsDiagnostic(ctx context.Context, c *clients, pkg, ns string) diag.Diagnostic {
	d := diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: "events", Package: pkg}
	evs, err := c.core.listEvents(ctx, ns)
	if err != nil {
		d.Message = fmt.Sprintf("events of namespace %s: %v", ns, err)
		return d
	}
	items := evs.Items
	slices.SortStableFunc(items, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b).Time) })
	if len(items) > maxEvents {
		items = items[len(items)-maxEvents:]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "last %d events of namespace %s:", len(items), ns)
	for _, e := range items {
		fmt.Fprintf(&b, "\n  %s %s/%s %s: %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, strings.TrimSpace(e.Message))
		if e.Count > 1 {
			fmt.Fprintf(&b, " (x%d)", e.Count)
		}
	}
	d.Message = tailText(b.String(), maxMessage)
	return d
}

func eventTime(e corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.CreationTimestamp
}

// podDiagnostics summarises pod statuses of ns and adds the log tail of every container that is not
// ready or has restarted. For the catalog namespace only the CatalogSource's pods count, and their logs
// are always included.
func podDiagnostics(ctx context.Context, c *clients, pkg, ns string, catalog bool) []diag.Diagnostic {
	opts := metav1.ListOptions{}
	rule := "pods"
	if catalog {
		opts.LabelSelector = "olm.catalogSource=" + CatalogSourceName
		rule = "catalog-pods"
	}
	var out []diag.Diagnostic
	add := func(rule, msg string) {
		out = append(out, diag.Diagnostic{Severity: diag.Note, Check: "smoke", Rule: rule, Package: pkg, Message: msg})
	}
	pods, err := c.core.listPods(ctx, ns, opts)
	if err != nil {
		add(rule, fmt.Sprintf("pods of namespace %s: %v", ns, err))
		return out
	}
	items := pods.Items
	if len(items) > maxPodsShown {
		items = items[:maxPodsShown]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods in namespace %s", len(pods.Items), ns)
	if catalog {
		fmt.Fprintf(&b, " serving CatalogSource %s", CatalogSourceName)
	}
	type logReq struct {
		pod, container string
		previous       bool
	}
	var logs []logReq
	for _, p := range items {
		fmt.Fprintf(&b, "\n  pod %s: phase %s", p.Name, p.Status.Phase)
		if p.Status.Reason != "" || p.Status.Message != "" {
			fmt.Fprintf(&b, " (%s: %s)", p.Status.Reason, p.Status.Message)
		}
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "\n    container %s: ready=%t restarts=%d %s", cs.Name, cs.Ready, cs.RestartCount, containerState(cs))
			if catalog || !cs.Ready || cs.RestartCount > 0 {
				// waiting to restart: the crashed run is the previous one; terminated: the current one
				logs = append(logs, logReq{pod: p.Name, container: cs.Name, previous: cs.RestartCount > 0 && cs.State.Waiting != nil})
			}
		}
	}
	add(rule, capText(b.String(), maxMessage))
	for _, l := range logs {
		text, err := containerLog(ctx, c, ns, l.pod, l.container, l.previous)
		if err != nil {
			add(rule+"-log", fmt.Sprintf("logs of container %s in pod %s/%s: %v", l.container, ns, l.pod, err))
			continue
		}
		add(rule+"-log", fmt.Sprintf("last %d log lines of container %s in pod %s/%s:\n%s", logLines, l.container, ns, l.pod, tailText(text, maxLog)))
	}
	return out
}

func containerState(cs corev1.ContainerStatus) string {
	s := ""
	switch {
	case cs.State.Waiting != nil:
		s = fmt.Sprintf("waiting %s: %s", cs.State.Waiting.Reason, cs.State.Waiting.Message)
	case cs.State.Terminated != nil:
		s = fmt.Sprintf("terminated exit %d %s", cs.State.Terminated.ExitCode, cs.State.Terminated.Reason)
	case cs.State.Running != nil:
		s = "running"
	}
	if t := cs.LastTerminationState.Terminated; t != nil {
		s += fmt.Sprintf("; last exit %d %s", t.ExitCode, t.Reason)
	}
	return strings.TrimSpace(s)
}

// containerLog returns the log tail of one run of a container. When that run's log is gone (kubelet
// answers with an error, or with its "unable to retrieve container logs" text) the other run (current
// or previous) is tried: some log beats none.
func containerLog(ctx context.Context, c *clients, ns, pod, container string, previous bool) (string, error) {
	text, err := readLog(ctx, c, ns, pod, container, previous)
	if err == nil && !strings.HasPrefix(text, "unable to retrieve container logs") {
		return text, nil
	}
	if other, oerr := readLog(ctx, c, ns, pod, container, !previous); oerr == nil && other != "" && !strings.HasPrefix(other, "unable to retrieve container logs") {
		return other, nil
	}
	return text, err
}

func readLog(ctx context.Context, c *clients, ns, pod, container string, previous bool) (string, error) {
	lines := int64(logLines)
	limit := int64(maxLog * 2)
	rc, err := c.core.podLog(ctx, ns, pod, &corev1.PodLogOptions{Container: container, TailLines: &lines, Previous: previous, LimitBytes: &limit})
	if err != nil {
		return "", err
	}
	defer rc.Close()
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, io.LimitReader(rc, limit)); err != nil {
		return "", err
	}
	return buf.String(), nil
}
