package smoke

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/catalogbot/catalogbot/diag"
)

// ownerNameLabel is the label operator-controller puts on every object of a ClusterExtension's release.
const ownerNameLabel = "olm.operatorframework.io/owner-name"

// retryGrace is how long a ClusterExtension may keep Progressing=True/Retrying with the same message
// before the install fails with that message (operator-controller retries errors it does not know to be
// terminal, such as a bundle image it cannot pull); tests shorten it.
var retryGrace = 30 * time.Second

// v1installer installs packages with ClusterExtensions; one per Run, shared by the parallel installs.
type v1installer struct {
	c        *clients
	opts     Options
	progress *progress
	interval time.Duration
	// sharer maps a package to the earlier package of the run whose namespace and ClusterExtension name
	// (NamespaceFor) it would share; see namesakes.
	sharer map[string]string
}

// namesakes maps each package whose NamespaceFor equals an earlier package's to that package ("a.b" and
// "a-b" are both smoke-a-b): its install would take over the other's objects, so it fails instead.
func namesakes(pkgs []string) map[string]string {
	first := map[string]string{}
	out := map[string]string{}
	for _, p := range pkgs {
		n := NamespaceFor(p)
		if o, ok := first[n]; ok {
			out[p] = o
			continue
		}
		first[n] = p
	}
	return out
}

// install creates pkg's namespace and ClusterExtension (pinned to version when set) and waits for it to
// be installed (at bundle expect when set) and for the release's Deployments to be available. phase
// names the catalog in messages ("" for the only one).
func (in *v1installer) install(ctx context.Context, pkg, version, expect, phase string) PackageResult {
	ns := NamespaceFor(pkg)
	res := PackageResult{Package: pkg, OLM: OLMv1, ClusterExtension: ns, Channel: in.opts.Channel[pkg], Namespace: ns, InstallMode: "AllNamespaces"}
	ctx, cancel := context.WithTimeout(ctx, in.opts.Timeout)
	defer cancel()
	err := in.run(ctx, pkg, version, expect, &res)
	in.finish(ctx, pkg, phase, &res, err)
	return res
}

// upgrade switches the ClusterExtension of pkg, installed from the base catalog, to the head's version
// once the ClusterCatalog serves the head catalog, and waits for the upgrade and its Deployments.
func (in *v1installer) upgrade(ctx context.Context, pkg string, res *PackageResult) {
	ctx, cancel := context.WithTimeout(ctx, in.opts.Timeout)
	defer cancel()
	res.Succeeded = false
	from, fromVersion := res.Bundle, res.Version
	to := in.opts.Versions[pkg]
	start := time.Now()
	patch := fmt.Appendf(nil, `{"spec":{"source":{"catalog":{"version":%q}}}}`, to)
	_, err := in.c.dyn.Resource(gvrClusterExtension).Patch(ctx, res.ClusterExtension, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	if err != nil {
		err = fmt.Errorf("switching ClusterExtension %s to version %s: %w", res.ClusterExtension, to, err)
		res.Steps = append(res.Steps, timing("upgrade", start, err))
	} else {
		in.progress.printf("%s: ClusterExtension %s switched from version %s to %s", pkg, res.ClusterExtension, fromVersion, to)
		err = in.follow(ctx, pkg, to, in.opts.Expect[pkg], res)
	}
	// still at the base's version, without a failure of its own (a crash, a Deployment that does not
	// run): the head catalog does not offer the upgrade, whatever OLM v1 said about it
	var f *failure
	if err != nil && res.Version == fromVersion && (!errors.As(err, &f) || f.rule == "install-failed" || f.rule == "install-blocked") {
		err = &failure{rule: "no-upgrade", bundle: in.opts.Expect[pkg], msg: fmt.Sprintf("package %s: %s (version %s) was installed from the base catalog, but OLM v1 did not upgrade it to version %s from the head catalog: %v", pkg, from, fromVersion, to, err)}
	}
	if err == nil && from != res.Bundle {
		res.UpgradedFrom = from
	}
	in.finish(ctx, pkg, "head catalog (upgrade from the base catalog)", res, err)
}

func (in *v1installer) run(ctx context.Context, pkg, version, expect string, res *PackageResult) error {
	if errs := validation.IsDNS1123Subdomain(pkg); len(errs) > 0 {
		return fail("invalid-package-name", "package name %q is not a valid Kubernetes object name, which OLM v1 requires of a package (packageName must be a DNS-1123 subdomain): %s", pkg, strings.Join(errs, "; "))
	}
	if other := in.sharer[pkg]; other != "" {
		return fail("name-collision", "packages %s and %s would share the namespace and ClusterExtension %s: the smoke install cannot tell them apart (rename one)", other, pkg, res.ClusterExtension)
	}
	start := time.Now()
	if err := ensureNamespace(ctx, in.c, res.Namespace, in.opts.PodSecurity); err != nil {
		res.Steps = append(res.Steps, timing("namespace", start, err))
		return err
	}
	if err := in.createExtension(ctx, pkg, version, res); err != nil {
		res.Steps = append(res.Steps, timing("cluster extension", start, err))
		return err
	}
	res.Steps = append(res.Steps, timing("cluster extension", start, nil))
	in.progress.printf("%s: ClusterExtension %s created (namespace %s, version %q, channel %q)", pkg, res.ClusterExtension, res.Namespace, version, in.opts.Channel[pkg])
	return in.follow(ctx, pkg, version, expect, res)
}

// createExtension creates the ClusterExtension of pkg. One left by an earlier run is deleted first;
// any other of that name is an error, never reused.
func (in *v1installer) createExtension(ctx context.Context, pkg, version string, res *PackageResult) error {
	catalogSource := map[string]any{
		"packageName": pkg,
		"selector":    map[string]any{"matchLabels": map[string]any{catalogNameLabel: ClusterCatalogName}},
	}
	if version != "" {
		catalogSource["version"] = version
	}
	if ch := in.opts.Channel[pkg]; ch != "" {
		catalogSource["channels"] = []any{ch}
	}
	name := res.ClusterExtension
	ce := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
		"metadata": map[string]any{"name": name, "labels": map[string]any{managedLabel: "true"}},
		"spec": map[string]any{
			"namespace": res.Namespace,
			"source":    map[string]any{"sourceType": "Catalog", "catalog": catalogSource},
		},
	}}
	ri := in.c.dyn.Resource(gvrClusterExtension)
	for {
		_, err := ri.Create(ctx, ce, metav1.CreateOptions{FieldManager: fieldManager})
		if err == nil {
			return nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating ClusterExtension %s: %w", name, err)
		}
		old, gerr := ri.Get(ctx, name, metaGet)
		if gerr != nil {
			continue
		}
		if old.GetLabels()[managedLabel] != "true" {
			return diag.UsageError(fmt.Errorf("ClusterExtension %s exists and was not created by catalogbot smoke", name))
		}
		if old.GetDeletionTimestamp() == nil {
			if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting ClusterExtension %s left by an earlier run: %w", name, err)
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for ClusterExtension %s from an earlier run to go away: %w", name, ctx.Err())
		case <-time.After(in.interval):
		}
	}
}

// follow waits until the ClusterExtension reports Installed=True for its current spec (at version and
// bundle expect when set), then until every Deployment of the release is rolled out and available:
// Installed=True alone does not mean the operator runs. Progressing=False (terminal), a Retrying that
// persists, crash-looping containers or a Deployment past its progress deadline end it early.
func (in *v1installer) follow(ctx context.Context, pkg, version, expect string, res *PackageResult) error {
	name, ns := res.ClusterExtension, res.Namespace
	stepStart := time.Now()
	var retrying persistence // the same Retrying message, seen in a row
	err := poll(ctx, in.interval, func(ctx context.Context) (bool, string, error) {
		ce, err := getV1Object(ctx, in.c, gvrClusterExtension, name)
		if err != nil {
			return false, "reading ClusterExtension " + name + ": " + err.Error(), nil
		}
		if inst := ce.Status.Install; inst != nil {
			res.Bundle, res.Version, res.CSV = inst.Bundle.Name, inst.Bundle.Version, inst.Bundle.Name
		}
		if refusal := admissionRefusal(ctx, in.c, ns); refusal != "" {
			return false, "", podSecurityFailure(pkg, firstNonEmpty(res.Bundle, expect), in.opts.PodSecurity, refusal)
		}
		if crash := crashLooping(ctx, in.c, ns, in.opts.CrashLoopRestarts); crash != "" {
			b := firstNonEmpty(res.Bundle, expect)
			return false, "", &failure{rule: "crash-loop", bundle: b, msg: fmt.Sprintf("package %s, bundle %s: %s", pkg, b, crash)}
		}
		installed, progressing := ce.condition("Installed"), ce.condition("Progressing")
		if installed != nil {
			res.Phase = "Installed=" + string(installed.Status) + " " + installed.Reason
		}
		if p := progressing; ce.current(p) && p.Status == metav1.ConditionFalse {
			return false, "", &failure{rule: "install-blocked", bundle: firstNonEmpty(expect, res.Bundle), msg: fmt.Sprintf("OLM v1 cannot install package %s: ClusterExtension %s Progressing=False %s: %s%s", pkg, name, p.Reason, strings.TrimSpace(p.Message), installedSuffix(installed))}
		}
		if p := progressing; ce.current(p) && p.Status == metav1.ConditionTrue && p.Reason == "Retrying" {
			if retrying.lasted(p.Message, retryGrace) {
				return false, "", &failure{rule: "install-failed", bundle: firstNonEmpty(expect, res.Bundle), msg: fmt.Sprintf("OLM v1 cannot install package %s: ClusterExtension %s kept retrying for %s: %s%s", pkg, name, retryGrace, strings.TrimSpace(p.Message), installedSuffix(installed))}
			}
		} else {
			retrying.clear()
		}
		if installed == nil || !ce.current(installed) || installed.Status != metav1.ConditionTrue {
			return false, fmt.Sprintf("ClusterExtension %s not installed yet: %s", name, ce.conditionsText()), nil
		}
		if version != "" && res.Version != version {
			return false, fmt.Sprintf("ClusterExtension %s has bundle %s (version %s) installed; waiting for version %s: %s", name, res.Bundle, res.Version, version, ce.conditionsText()), nil
		}
		if expect != "" && res.Bundle != expect {
			return false, fmt.Sprintf("ClusterExtension %s has bundle %s installed; waiting for bundle %s: %s", name, res.Bundle, expect, ce.conditionsText()), nil
		}
		return true, "", nil
	})
	if err != nil {
		res.Steps = append(res.Steps, timing("installed "+res.Bundle, stepStart, err))
		return err
	}
	res.Steps = append(res.Steps, timing("installed "+res.Bundle, stepStart, nil))
	in.progress.printf("%s: ClusterExtension %s Installed=True (bundle %s, version %s); waiting for its Deployments", pkg, name, res.Bundle, res.Version)
	stepStart = time.Now()
	err = in.waitDeployments(ctx, pkg, res)
	res.Steps = append(res.Steps, timing("deployments "+res.Bundle, stepStart, err))
	return err
}

// waitDeployments waits until every Deployment of the release in the package's namespace (those
// labelled with the ClusterExtension as owner; every Deployment of the namespace when none is) is
// rolled out and available.
func (in *v1installer) waitDeployments(ctx context.Context, pkg string, res *PackageResult) error {
	ns := res.Namespace
	return poll(ctx, in.interval, func(ctx context.Context) (bool, string, error) {
		if refusal := admissionRefusal(ctx, in.c, ns); refusal != "" {
			return false, "", podSecurityFailure(pkg, res.Bundle, in.opts.PodSecurity, refusal)
		}
		if crash := crashLooping(ctx, in.c, ns, in.opts.CrashLoopRestarts); crash != "" {
			return false, "", &failure{rule: "crash-loop", bundle: res.Bundle, msg: fmt.Sprintf("package %s, bundle %s: installed by OLM v1, but %s", pkg, res.Bundle, crash)}
		}
		list, err := in.c.core.listDeployments(ctx, ns)
		if err != nil {
			return false, "listing deployments of " + ns + ": " + err.Error(), nil
		}
		deps := releaseDeployments(list.Items, res.ClusterExtension)
		var waiting []string
		for i := range deps {
			d := &deps[i]
			ok, why, stuck := rolledOut(d)
			if stuck {
				return false, "", &failure{rule: "deployment-unavailable", bundle: res.Bundle, msg: fmt.Sprintf("package %s, bundle %s: installed by OLM v1, but Deployment %s/%s %s", pkg, res.Bundle, ns, d.Name, why)}
			}
			if !ok {
				waiting = append(waiting, fmt.Sprintf("Deployment %s/%s %s", ns, d.Name, why))
			}
		}
		if len(waiting) > 0 {
			return false, "installed, but not running: " + strings.Join(waiting, "; "), nil
		}
		return true, "", nil
	})
}

// releaseDeployments are the Deployments labelled with owner as their ClusterExtension, or all of them
// when none is labelled.
func releaseDeployments(all []appsv1.Deployment, owner string) []appsv1.Deployment {
	var out []appsv1.Deployment
	for _, d := range all {
		if d.Labels[ownerNameLabel] == owner {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		return all
	}
	return out
}

// rolledOut says whether d's current spec runs and is available, why not, and whether it never will
// (past its progress deadline, or scaled to zero: an operator that does not run).
func rolledOut(d *appsv1.Deployment) (ok bool, why string, stuck bool) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse && c.Reason == "ProgressDeadlineExceeded" {
			return false, "exceeded its progress deadline: " + c.Message, true
		}
	}
	st := d.Status
	switch {
	case want == 0:
		return false, "has 0 replicas: the operator would not run", true
	case st.ObservedGeneration < d.Generation:
		return false, "not yet observed by its controller", false
	case st.UpdatedReplicas < want:
		return false, fmt.Sprintf("rolling out (%d of %d replicas updated)", st.UpdatedReplicas, want), false
	case st.Replicas > st.UpdatedReplicas:
		return false, fmt.Sprintf("rolling out (%d old replicas left)", st.Replicas-st.UpdatedReplicas), false
	case !deploymentAvailable(d) || st.AvailableReplicas < want:
		return false, fmt.Sprintf("not available (%d of %d replicas available)", st.AvailableReplicas, want), false
	}
	return true, "", false
}

// finish records the outcome of an install step: success, or the failure as the lead diagnostic followed
// by everything that explains it.
func (in *v1installer) finish(ctx context.Context, pkg, phase string, res *PackageResult, err error) {
	if err == nil {
		res.Succeeded = true
		in.progress.printf("%s: bundle %s (version %s) installed and available in namespace %s%s", pkg, res.Bundle, res.Version, res.Namespace, phaseSuffix(phase))
		return
	}
	bundle := res.Bundle
	if bundle == "" {
		bundle = in.opts.Expect[pkg]
	}
	lead := failureOf(pkg, phase, bundle, res, err, func(err error) error {
		return fmt.Errorf("ClusterExtension %s: package %s was not installed and available within %s: %w", res.ClusterExtension, pkg, in.opts.Timeout, err)
	}, "the diagnostics below show the ClusterExtension and ClusterCatalog conditions, events, pod statuses, container logs and the OLM v1 controllers' log lines about this package")
	in.progress.printf("%s: FAILED: %s", pkg, lead.Message)
	res.Diagnostics = append(res.Diagnostics, lead)
	if rule := lead.Rule; rule == "invalid-package-name" || rule == "name-collision" {
		return // nothing was created for this package
	}
	res.Diagnostics = append(res.Diagnostics, boundedDiagnostics(ctx, func(ctx context.Context) []diag.Diagnostic {
		return collectV1Diagnostics(ctx, in.c, pkg, res.ClusterExtension, res.Namespace)
	})...)
}

func installedSuffix(c *metav1.Condition) string {
	if c == nil || c.Message == "" {
		return ""
	}
	return fmt.Sprintf(" (Installed=%s %s: %s)", c.Status, c.Reason, strings.TrimSpace(c.Message))
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
