package smoke

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// installer installs packages from the CatalogSource; one per Run, shared by the parallel installs.
type installer struct {
	c         *clients
	opts      Options
	catalogNS string
	progress  *progress
	// interval between status reads; short in tests.
	interval time.Duration
}

// failure is a package install failure: the diagnostic rule and message that lead the report, and the
// bundle at fault when it is known.
type failure struct {
	rule, msg, bundle string
}

func (f *failure) Error() string { return f.msg }

func fail(rule, format string, args ...any) error {
	return &failure{rule: rule, msg: fmt.Sprintf(format, args...)}
}

// resolutionGrace is how long OLM's ResolutionFailed condition must persist before the install fails
// (OLM retries while a catalog is still being read); tests shorten it.
var resolutionGrace = 30 * time.Second

// requirementsGrace is how long a CSV may stay Failed with reason RequirementsNotMet before the install
// fails: during an upgrade OLM v0 can report "requirements no longer met" for a moment and move the CSV
// back once its CRDs and RBAC are in place again (seen in the offline kind lane); tests shorten it.
var requirementsGrace = 30 * time.Second

// NamespaceFor is the namespace a package is installed into.
func NamespaceFor(pkg string) string {
	s := "smoke-" + strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(pkg), "-"), "-")
	if len(s) > 56 { // room for "-target"
		s = strings.TrimRight(s[:56], "-")
	}
	return s
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// install subscribes pkg in its own namespace and follows it until its CSV at target ("" = whatever
// the catalog's channel head is) Succeeded. phase names the catalog in messages ("" for the only one).
func (in *installer) install(ctx context.Context, pkg, target, phase string) PackageResult {
	ns := NamespaceFor(pkg)
	res := PackageResult{Package: pkg, Channel: in.opts.Channel[pkg], Namespace: ns}
	ctx, cancel := context.WithTimeout(ctx, in.opts.Timeout)
	defer cancel()
	err := in.run(ctx, pkg, target, &res)
	in.finish(ctx, pkg, phase, &res, err)
	return res
}

// upgrade follows the Subscription of pkg, installed from the base catalog, after the CatalogSource was
// pointed at the head catalog: its CSV must reach target.
func (in *installer) upgrade(ctx context.Context, pkg, target string, res *PackageResult) {
	ctx, cancel := context.WithTimeout(ctx, in.opts.Timeout)
	defer cancel()
	res.Succeeded = false
	from := res.CSV
	err := in.follow(ctx, pkg, target, res)
	if err != nil && from != target && res.CSV == from {
		err = &failure{rule: "no-upgrade", bundle: target, msg: fmt.Sprintf("package %s: %s was installed from the base catalog, but the head catalog offered no upgrade from it to %s: %v", pkg, from, target, err)}
	}
	if err == nil && from != res.CSV {
		res.UpgradedFrom = from
	}
	in.finish(ctx, pkg, "head catalog (upgrade from the base catalog)", res, err)
}

// finish records the outcome of an install step: success, or the failure as the lead diagnostic followed
// by everything that explains it.
func (in *installer) finish(ctx context.Context, pkg, phase string, res *PackageResult, err error) {
	ns := res.Namespace
	if err == nil {
		res.Succeeded = true
		in.progress.printf("%s: CSV %s Succeeded in namespace %s%s", pkg, res.CSV, ns, phaseSuffix(phase))
		return
	}
	bundle := res.CSV
	if bundle == "" {
		bundle = in.opts.Expect[pkg]
	}
	lead := failureOf(pkg, phase, bundle, res, err, func(err error) error {
		return fmt.Errorf("no CSV Succeeded within %s: %w", in.opts.Timeout, err)
	}, "the diagnostics below show the Subscription, InstallPlan and CSV status, bundle unpacking, events and container logs")
	in.progress.printf("%s: FAILED: %s", pkg, lead.Message)
	res.Diagnostics = append(res.Diagnostics, lead)
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer dcancel()
	res.Diagnostics = append(res.Diagnostics, collectDiagnostics(dctx, in.c, pkg, ns, in.catalogNS, in.opts.BundleImages)...)
}

// failureOf is the lead diagnostic of a failed install step (either OLM): the failure's own rule and
// bundle, install-timeout (its error made by timedOut) when the step ran out of time, install-failed else;
// the phase ("base catalog") leads the message.
func failureOf(pkg, phase, bundle string, res *PackageResult, err error, timedOut func(error) error, hint string) diag.Diagnostic {
	rule := "install-failed"
	var f *failure
	switch {
	case errors.As(err, &f):
		rule = f.rule
		if f.bundle != "" {
			bundle = f.bundle
		}
	case errors.Is(err, context.DeadlineExceeded):
		rule = "install-timeout"
		err = timedOut(err)
	}
	msg := err.Error()
	if phase != "" {
		msg = "installing from the " + phase + ": " + msg
	}
	return diag.Diagnostic{Severity: diag.Error, Check: "smoke", Rule: rule, Package: pkg, Channel: res.Channel,
		Bundle: bundle, Message: capText(msg, maxMessage), Hint: hint}
}

func phaseSuffix(phase string) string {
	if phase == "" {
		return ""
	}
	return " (" + phase + ")"
}

func (in *installer) run(ctx context.Context, pkg, target string, res *PackageResult) error {
	ns := res.Namespace
	start := time.Now()
	plan, err := planGroup(ns, in.opts.InstallModes[pkg])
	if err != nil {
		return fail("install-mode", "package %s: %v", pkg, err)
	}
	res.InstallMode = plan.Mode
	for _, n := range append([]string{ns}, plan.Extra...) {
		if err := ensureNamespace(ctx, in.c, n, in.opts.PodSecurity); err != nil {
			res.Steps = append(res.Steps, timing("namespace", start, err))
			return err
		}
	}
	if _, err := in.c.dyn.Resource(gvrOperatorGroup).Namespace(ns).Create(ctx, operatorGroup(ns, plan), metav1.CreateOptions{FieldManager: fieldManager}); err != nil {
		err = fmt.Errorf("creating OperatorGroup in %s: %w", ns, err)
		res.Steps = append(res.Steps, timing("namespace", start, err))
		return err
	}
	sub := &v1alpha1.Subscription{
		TypeMeta:   metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "Subscription"},
		ObjectMeta: metav1.ObjectMeta{Name: pkg, Namespace: ns, Labels: map[string]string{managedLabel: "true"}},
		Spec: &v1alpha1.SubscriptionSpec{
			CatalogSource:          CatalogSourceName,
			CatalogSourceNamespace: in.catalogNS,
			Package:                pkg,
			Channel:                in.opts.Channel[pkg],
			InstallPlanApproval:    v1alpha1.ApprovalManual,
			StartingCSV:            in.opts.Upgrade[pkg],
		},
	}
	u, err := toUnstructured(sub)
	if err == nil {
		_, err = in.c.dyn.Resource(gvrSubscription).Namespace(ns).Create(ctx, u, metav1.CreateOptions{FieldManager: fieldManager})
	}
	if err != nil {
		err = fmt.Errorf("creating Subscription %s/%s: %w", ns, pkg, err)
		res.Steps = append(res.Steps, timing("subscribe", start, err))
		return err
	}
	res.Steps = append(res.Steps, timing("subscribe", start, nil))
	in.progress.printf("%s: subscribed in %s (%s, channel %q)", pkg, ns, plan.Mode, in.opts.Channel[pkg])
	return in.follow(ctx, pkg, target, res)
}

// follow approves each InstallPlan of the Subscription and waits until the Subscription is at the latest
// CSV it knows, that CSV Succeeded and, when target is set, it is target. Crash-looping containers, a
// failed CSV or InstallPlan, a bundle image that cannot be pulled or unpacked, or a resolution failure
// that persists end it early. Each poll reads the Subscription and takes follower's steps in order.
func (in *installer) follow(ctx context.Context, pkg, target string, res *PackageResult) error {
	f := &follower{in: in, pkg: pkg, target: target, ns: res.Namespace, res: res,
		approved: map[string]bool{}, succeeded: map[string]bool{}, stepStart: time.Now()}
	err := poll(ctx, in.interval, func(ctx context.Context) (bool, string, error) {
		sub, err := getTyped[v1alpha1.Subscription](ctx, in.c, gvrSubscription, f.ns, pkg)
		if err != nil {
			return false, "reading Subscription: " + err.Error(), nil
		}
		st := sub.Status
		if err := f.resolution(st); err != nil {
			return false, "", err
		}
		if waiting, err := f.approvePlan(ctx, st); waiting != "" || err != nil {
			return false, waiting, err
		}
		if err := f.problems(ctx, st); err != nil {
			return false, "", err
		}
		return f.csv(ctx, st)
	})
	if err != nil {
		res.Steps = append(res.Steps, timing("csv "+res.CSV, f.stepStart, err))
		if start := in.opts.Upgrade[pkg]; start != "" && res.CSV == start && f.succeeded[start] {
			return fail("no-upgrade", "package %s: %s installed, but the catalog offered no upgrade from it: %v", pkg, start, err)
		}
		return err
	}
	return nil
}

func installPlanMessage(ip *v1alpha1.InstallPlan) string {
	msg := ip.Status.Message
	for _, c := range ip.Status.Conditions {
		if c.Message != "" {
			msg += " " + string(c.Type) + ": " + string(c.Reason) + ": " + c.Message
		}
	}
	return strings.TrimSpace(msg)
}

// crashLooping describes the first container in ns that restarted at least limit times, or "".
func crashLooping(ctx context.Context, c *clients, ns string, limit int32) string {
	pods, err := c.core.listPods(ctx, ns, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, cs := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			if cs.RestartCount < limit {
				continue
			}
			reason := ""
			if w := cs.State.Waiting; w != nil {
				reason = w.Reason
			}
			if t := cs.LastTerminationState.Terminated; t != nil {
				reason = strings.TrimSpace(fmt.Sprintf("%s (last exit code %d %s)", reason, t.ExitCode, t.Reason))
			}
			return fmt.Sprintf("container %s of pod %s restarted %d times %s", cs.Name, p.Name, cs.RestartCount, reason)
		}
	}
	return ""
}

// ensureNamespace creates ns with the Pod Security Admission labels of level (podSecurityLabels) and
// checks that the cluster enforces them (checkEnforced). A namespace left by an earlier run (labelled
// by Run) is deleted first; any other existing namespace of that name is an error, never reused.
func ensureNamespace(ctx context.Context, c *clients, ns, level string) error {
	labels := podSecurityLabels(level)
	labels[managedLabel] = "true"
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}
	for {
		err := c.core.createNamespace(ctx, obj)
		if err == nil {
			return checkEnforced(ctx, c, ns, level)
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
		old, gerr := c.core.getNamespace(ctx, ns)
		if gerr != nil {
			continue
		}
		if old.Labels[managedLabel] != "true" {
			return diag.UsageError(fmt.Errorf("namespace %s exists and was not created by catalogbot smoke", ns))
		}
		if old.DeletionTimestamp == nil {
			if err := c.core.deleteNamespace(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting namespace %s left by an earlier run: %w", ns, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for namespace %s from an earlier run to go away: %w", ns, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
