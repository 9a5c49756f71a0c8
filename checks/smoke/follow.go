package smoke

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// follower is what installer.follow has seen of one package's Subscription across its polls.
type follower struct {
	in          *installer
	pkg, target string
	ns          string
	res         *PackageResult

	approved, succeeded        map[string]bool // InstallPlans approved, CSVs seen Succeeded
	firstSucceeded             string
	lastApproved               string // the CSV of the last InstallPlan approved
	resolutionFailed, unmetReq persistence
	stepStart                  time.Time
}

// markSucceeded records the CSV's success once, timing it as a step; a second CSV succeeding is an
// upgrade from the first.
func (f *follower) markSucceeded(name string) {
	if f.succeeded[name] {
		return
	}
	f.succeeded[name] = true
	f.res.Steps = append(f.res.Steps, timing("csv "+name, f.stepStart, nil))
	f.stepStart = time.Now()
	if f.firstSucceeded == "" {
		f.firstSucceeded = name
	} else {
		f.res.UpgradedFrom = f.firstSucceeded
	}
	f.in.progress.printf("%s: CSV %s phase Succeeded", f.pkg, name)
}

// resolution fails the install when OLM has failed to resolve the package for longer than its grace.
func (f *follower) resolution(st v1alpha1.SubscriptionStatus) error {
	c := st.GetCondition(v1alpha1.SubscriptionResolutionFailed)
	if c.Status != corev1.ConditionTrue {
		f.resolutionFailed.clear()
		return nil
	}
	if f.resolutionFailed.lasted("", resolutionGrace) {
		return &failure{rule: "resolution-failed", bundle: f.in.opts.Expect[f.pkg], msg: fmt.Sprintf("OLM cannot resolve package %s: %s: %s", f.pkg, c.Reason, c.Message)}
	}
	return nil
}

// approvePlan approves the Subscription's InstallPlan not approved yet. An upgrade is approved only once
// the CSV before it Succeeded (what it waits for then): that is what an upgrade test proves, and OLM may
// offer the next plan before Run saw the previous CSV's phase.
func (f *follower) approvePlan(ctx context.Context, st v1alpha1.SubscriptionStatus) (waiting string, err error) {
	ref := st.InstallPlanRef
	if ref == nil || f.approved[ref.Name] {
		return "", nil
	}
	ip, err := getTyped[v1alpha1.InstallPlan](ctx, f.in.c, gvrInstallPlan, f.ns, ref.Name)
	if err != nil {
		return "reading InstallPlan " + ref.Name + ": " + err.Error(), nil
	}
	if ip.Status.Phase == v1alpha1.InstallPlanPhaseFailed {
		return "", &failure{rule: "installplan-failed", bundle: strings.Join(ip.Spec.ClusterServiceVersionNames, ","), msg: fmt.Sprintf("InstallPlan %s/%s failed: %s", f.ns, ip.Name, installPlanMessage(ip))}
	}
	if prev := f.lastApproved; prev != "" && !f.succeeded[prev] {
		csv, err := getTyped[v1alpha1.ClusterServiceVersion](ctx, f.in.c, gvrCSV, f.ns, prev)
		if err != nil || csv.Status.Phase != v1alpha1.CSVPhaseSucceeded {
			return fmt.Sprintf("waiting for CSV %s to succeed before approving InstallPlan %s", prev, ip.Name), nil
		}
		f.markSucceeded(prev)
	}
	if !ip.Spec.Approved {
		patch := []byte(`{"spec":{"approved":true}}`)
		if _, err := f.in.c.dyn.Resource(gvrInstallPlan).Namespace(f.ns).Patch(ctx, ip.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
			return "", fmt.Errorf("approving InstallPlan %s/%s: %w", f.ns, ip.Name, err)
		}
		f.in.progress.printf("%s: approved InstallPlan %s for %s", f.pkg, ip.Name, strings.Join(ip.Spec.ClusterServiceVersionNames, ", "))
	}
	f.approved[ref.Name] = true
	if len(ip.Spec.ClusterServiceVersionNames) > 0 {
		f.lastApproved = st.CurrentCSV
	}
	return "", nil
}

// problems ends the install early on what will not get better by waiting: a bundle OLM could not unpack,
// a bundle image that cannot be pulled, pods refused by Pod Security admission, crash-looping containers.
func (f *follower) problems(ctx context.Context, st v1alpha1.SubscriptionStatus) error {
	in, pkg := f.in, f.pkg
	if c := st.GetCondition(v1alpha1.SubscriptionBundleUnpackFailed); c.Status == corev1.ConditionTrue {
		return &failure{rule: "unpack-failed", bundle: in.opts.Expect[pkg], msg: fmt.Sprintf("OLM could not unpack a bundle of package %s: %s: %s", pkg, c.Reason, c.Message)}
	}
	if err := unpackProblem(ctx, in.c, in.catalogNS, pkg, in.opts.BundleImages); err != nil {
		return err
	}
	if refusal := admissionRefusal(ctx, in.c, f.ns); refusal != "" {
		return podSecurityFailure(pkg, firstNonEmpty(st.CurrentCSV, in.opts.Expect[pkg]), in.opts.PodSecurity, refusal)
	}
	if crash := crashLooping(ctx, in.c, f.ns, in.opts.CrashLoopRestarts); crash != "" {
		return &failure{rule: "crash-loop", bundle: st.CurrentCSV, msg: fmt.Sprintf("package %s, bundle %s: %s", pkg, st.CurrentCSV, crash)}
	}
	return nil
}

// csv reads the Subscription's current CSV and says whether the install is done: that CSV Succeeded, is
// the target (when there is one) and the Subscription is at the latest it knows. A CSV whose requirements
// are not met gets a grace for OLM to retry; any other failed CSV ends the install.
func (f *follower) csv(ctx context.Context, st v1alpha1.SubscriptionStatus) (bool, string, error) {
	ns, name := f.ns, st.CurrentCSV
	if name == "" {
		return false, fmt.Sprintf("Subscription %s/%s has no current CSV yet (state %q)", ns, f.pkg, st.State), nil
	}
	f.res.CSV = name
	csv, err := getTyped[v1alpha1.ClusterServiceVersion](ctx, f.in.c, gvrCSV, ns, name)
	if apierrors.IsNotFound(err) {
		return false, fmt.Sprintf("CSV %s/%s not created yet (Subscription state %q)", ns, name, st.State), nil
	}
	if err != nil {
		return false, "reading CSV " + name + ": " + err.Error(), nil
	}
	f.res.Phase = string(csv.Status.Phase)
	if csv.Status.Phase != v1alpha1.CSVPhaseFailed {
		f.unmetReq.clear()
	}
	switch csv.Status.Phase {
	case v1alpha1.CSVPhaseFailed:
		if csv.Status.Reason == v1alpha1.CSVReasonRequirementsNotMet {
			if !f.unmetReq.lasted("", requirementsGrace) {
				return false, fmt.Sprintf("CSV %s/%s failed: %s: %s (waiting up to %s for OLM to retry)", ns, name, csv.Status.Reason, csv.Status.Message, requirementsGrace), nil
			}
		}
		return false, "", &failure{rule: "csv-failed", bundle: name, msg: fmt.Sprintf("CSV %s/%s failed: %s: %s", ns, name, csv.Status.Reason, csv.Status.Message)}
	case v1alpha1.CSVPhaseSucceeded:
		f.markSucceeded(name)
		if name == f.in.opts.Upgrade[f.pkg] {
			// OLM may report AtLatestKnown before it has looked for the update: keep waiting.
			return false, fmt.Sprintf("CSV %s Succeeded; waiting for the catalog to offer an upgrade from it (Subscription state %q)", name, st.State), nil
		}
		if f.target != "" && name != f.target {
			return false, fmt.Sprintf("CSV %s Succeeded; waiting for the catalog to offer an upgrade to %s (Subscription state %q)", name, f.target, st.State), nil
		}
		if st.State == v1alpha1.SubscriptionStateAtLatest && st.InstalledCSV == name {
			return true, "", nil
		}
		return false, fmt.Sprintf("CSV %s Succeeded; Subscription state %q", name, st.State), nil
	}
	return false, fmt.Sprintf("CSV %s/%s phase %q: %s", ns, name, csv.Status.Phase, csv.Status.Message), nil
}
