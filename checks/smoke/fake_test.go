package smoke

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
)

// fakeBackend is a hand-written kind stand-in that records what Run asked of it.
type fakeBackend struct {
	mu        sync.Mutex
	exists    bool
	createErr error
	// blockCreate makes Create wait for ctx (a cluster that never comes up).
	blockCreate bool
	calls       []string
	existsErr   error // the container engine does not answer
	deleteErr   error
}

func (b *fakeBackend) record(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, s)
}

func (b *fakeBackend) Calls() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

func (b *fakeBackend) Exists(_ context.Context, name string) (bool, error) {
	return b.exists, b.existsErr
}
func (b *fakeBackend) Create(ctx context.Context, name, image, config string) error {
	b.record("create " + name + " " + image)
	if b.blockCreate {
		<-ctx.Done()
		return ctx.Err()
	}
	return b.createErr
}
func (b *fakeBackend) Delete(_ context.Context, name string) error {
	b.record("delete " + name)
	return b.deleteErr
}
func (b *fakeBackend) KubeConfig(_ context.Context, name string) ([]byte, error) {
	return []byte("fake"), nil
}
func (b *fakeBackend) LoadArchive(_ context.Context, name, path string) error {
	b.record("load " + path)
	return nil
}

// fakeOperator says how the simulated OLM treats one package.
type fakeOperator struct {
	versions []string // CSV names in upgrade order; the last is the channel head
	crash    bool     // the CSV's pod crash-loops and the CSV never succeeds
	failCSV  bool     // the CSV goes to phase Failed
	// requirements: the CSV goes to phase Failed with reason RequirementsNotMet; with recovers, the next
	// reconcile moves it to Succeeded (OLM v0's transient "requirements no longer met" during upgrades).
	requirements, recovers bool
	// inBase is how many of versions the base catalog (fakeCluster.baseImage) offers; 0: none.
	inBase int
	// bundleImage is the image of the package's bundles; unpack says what its unpack pod does:
	// "unpullable" (ImagePullBackOff) or "fail" (the pull container exits 1). "": no unpack pod.
	bundleImage, unpack string
	// OLM v1 (v1fake_test.go): blocked is the message of a terminal Progressing=False/Blocked, retrying
	// that of a Progressing=True/Retrying that persists; silent: operator-controller never writes a
	// status; unavailable: the Deployment never becomes available (without crashing).
	blocked, retrying   string
	silent, unavailable bool
	// privileged: the operator's pod is privileged, on the host's network, with the node's / mounted
	// (psa_fake_test.go): the admission refuses it in a namespace enforcing baseline or restricted.
	privileged bool
}

// fakeCluster is client-go's in-memory clients plus a hand-written simulation of OLM's controllers:
// it marks the CatalogSource READY, answers Subscriptions with InstallPlans, and on approval creates the
// CSV (Succeeded, or Installing with a crash-looping pod).
type fakeCluster struct {
	c         *clients
	kube      *kubefake.Clientset // behind c.core (typedCore)
	operators map[string]fakeOperator
	// olm: whether OLM's CRDs and deployments exist from the start
	olm bool
	// catalogNeverReady keeps the CatalogSource in TRANSIENT_FAILURE.
	catalogNeverReady bool
	// baseImage is the base catalog's image: while the CatalogSource serves it, only the operators'
	// inBase versions exist. serving is the image the catalog pod runs.
	baseImage, serving string
	pods               int
	applied            []string
	mu                 sync.Mutex
	// stepMu keeps the simulation's steps from overlapping: the goroutine's and those that follow Run's
	// writes (fakesync_test.go).
	stepMu sync.Mutex
	// v1 simulates OLM v1's controllers too when set (newFakeV1).
	v1 *fakeV1
	// noAdmission: the cluster has no Pod Security Admission (psa_fake_test.go); escaped lists the
	// namespaces where a privileged operator's pods ran.
	noAdmission bool
	escaped     []string
	// podsSeen: namespaces in which a dry-run pod was asked for (the first is refused: psa_fake_test.go)
	podsSeen map[string]bool
}

var listKinds = map[schema.GroupVersionResource]string{
	gvrCatalogSource: "CatalogSourceList",
	gvrSubscription:  "SubscriptionList",
	gvrInstallPlan:   "InstallPlanList",
	gvrCSV:           "ClusterServiceVersionList",
	gvrOperatorGroup: "OperatorGroupList",
	gvrCRD:           "CustomResourceDefinitionList",
	// OLM v1 (v1fake_test.go)
	gvrClusterCatalog:   "ClusterCatalogList",
	gvrClusterExtension: "ClusterExtensionList",
}

func newFakeCluster(t *testing.T, olm bool, ops map[string]fakeOperator) *fakeCluster {
	t.Helper()
	f := &fakeCluster{operators: ops, olm: olm}
	f.kube = kubefake.NewClientset()
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	f.c = &clients{core: typedCore{f.kube}, dyn: dyn, apply: f}
	f.admitPods()
	if olm {
		f.installOLM(context.Background())
	}
	return f
}

// Apply is the fake's applier: it records kinds/names and installs OLM when it sees its deployments.
func (f *fakeCluster) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	f.mu.Lock()
	for _, o := range objs {
		f.applied = append(f.applied, o.GetKind()+"/"+o.GetName())
	}
	f.mu.Unlock()
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crd := o.DeepCopy()
			unstructured.SetNestedSlice(crd.Object, []any{map[string]any{"type": "Established", "status": "True"}}, "status", "conditions")
			if _, err := f.c.dyn.Resource(gvrCRD).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return err
			}
		case "Deployment":
			if err := f.createDeployment(ctx, o.GetNamespace(), o.GetName()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *fakeCluster) installOLM(ctx context.Context) {
	for _, n := range olmCRDs {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": n}}}
		f.c.dyn.Resource(gvrCRD).Create(ctx, u, metav1.CreateOptions{})
	}
	for _, n := range olmDeployments {
		f.createDeployment(ctx, "olm", n)
	}
}

func (f *fakeCluster) createDeployment(ctx context.Context, ns, name string) error {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: name, Command: []string{"/bin/" + name}, Args: []string{"--namespace", "olm-global"}}}}}},
		Status: appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}},
	}
	_, err := f.kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// simulate runs the OLM simulation until ctx ends.
func (f *fakeCluster) simulate(ctx context.Context) {
	for ctx.Err() == nil {
		f.step(ctx)
		time.Sleep(2 * time.Millisecond)
	}
}

func (f *fakeCluster) step(ctx context.Context) {
	f.stepMu.Lock()
	defer f.stepMu.Unlock()
	if f.v1 != nil {
		f.v1.step(ctx)
	}
	dyn := f.c.dyn
	css, _ := dyn.Resource(gvrCatalogSource).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if css != nil {
		for _, cs := range css.Items {
			f.ensureCatalogPod(ctx, &cs)
			state := "READY"
			if f.catalogNeverReady {
				state = "TRANSIENT_FAILURE"
			}
			// The status is written on the object as it is now, and only when it changes: the fake's
			// UpdateStatus writes the whole object, so writing the listed copy could undo a spec update
			// (a new image) made since the list.
			ri := dyn.Resource(gvrCatalogSource).Namespace(cs.GetNamespace())
			now, err := ri.Get(ctx, cs.GetName(), metav1.GetOptions{})
			if err != nil {
				continue
			}
			if cur, _, _ := unstructured.NestedString(now.Object, "status", "connectionState", "lastObservedState"); cur == state {
				continue
			}
			unstructured.SetNestedField(now.Object, state, "status", "connectionState", "lastObservedState")
			ri.UpdateStatus(ctx, now, metav1.UpdateOptions{})
		}
	}
	subs, _ := dyn.Resource(gvrSubscription).Namespace(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if subs == nil {
		return
	}
	for i := range subs.Items {
		f.reconcileSubscription(ctx, &subs.Items[i])
	}
}

// ensureCatalogPod replaces the CatalogSource's pod when it does not run the CatalogSource's image, as
// OLM's registry reconciler does.
func (f *fakeCluster) ensureCatalogPod(ctx context.Context, cs *unstructured.Unstructured) {
	image, _, _ := unstructured.NestedString(cs.Object, "spec", "image")
	pods := f.kube.CoreV1().Pods(cs.GetNamespace())
	list, _ := pods.List(ctx, metav1.ListOptions{LabelSelector: "olm.catalogSource=" + cs.GetName()})
	if list != nil {
		for _, p := range list.Items {
			if p.Spec.Containers[0].Image == image {
				return
			}
			pods.Delete(ctx, p.Name, metav1.DeleteOptions{})
		}
	}
	f.mu.Lock()
	f.pods++
	name := fmt.Sprintf("%s-%d", cs.GetName(), f.pods)
	f.mu.Unlock()
	pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: cs.GetNamespace(), Labels: map[string]string{"olm.catalogSource": cs.GetName()}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "registry-server", Image: image}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "registry-server", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}},
	}, metav1.CreateOptions{})
	f.mu.Lock()
	f.serving = image
	f.mu.Unlock()
}

// unpackPod creates the failing bundle-unpack pod of op in the catalog namespace (once).
func (f *fakeCluster) unpackPod(ctx context.Context, catalogNS, pkg string, op fakeOperator) {
	st := corev1.ContainerStatus{Name: "pull", Image: op.bundleImage}
	phase := corev1.PodPending
	if op.unpack == "unpullable" {
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "` + op.bundleImage + `"`}
	} else {
		phase = corev1.PodFailed
		st.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "Error: error finding metadata directory: metadata dir not found"}
	}
	f.kube.CoreV1().Pods(catalogNS).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "unpack-" + pkg, Namespace: catalogNS, Labels: map[string]string{bundleUnpackLabel: "cm-" + pkg}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "util", Image: "olm"}, {Name: "pull", Image: op.bundleImage}},
			Containers:     []corev1.Container{{Name: "extract", Image: "opm"}},
		},
		Status: corev1.PodStatus{Phase: phase, InitContainerStatuses: []corev1.ContainerStatus{
			{Name: "util", Image: "olm", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}}, st}},
	}, metav1.CreateOptions{})
}

func (f *fakeCluster) reconcileSubscription(ctx context.Context, sub *unstructured.Unstructured) {
	dyn := f.c.dyn
	ns := sub.GetNamespace()
	pkg, _, _ := unstructured.NestedString(sub.Object, "spec", "name")
	op, ok := f.operators[pkg]
	f.mu.Lock()
	onBase := f.baseImage != "" && f.serving == f.baseImage
	f.mu.Unlock()
	if ok && onBase {
		op.versions = op.versions[:op.inBase]
		ok = len(op.versions) > 0
	}
	if ok && op.requirements && op.recovers && f.recoverCSV(ctx, sub) {
		return
	}
	if ok && op.unpack != "" {
		catalogNS, _, _ := unstructured.NestedString(sub.Object, "spec", "sourceNamespace")
		f.unpackPod(ctx, catalogNS, pkg, op)
		return
	}
	if !ok {
		unstructured.SetNestedSlice(sub.Object, []any{map[string]any{"type": "ResolutionFailed", "status": "True",
			"reason": "ConstraintsNotSatisfiable", "message": "no operators found in package " + pkg}}, "status", "conditions")
		dyn.Resource(gvrSubscription).Namespace(ns).UpdateStatus(ctx, sub, metav1.UpdateOptions{})
		return
	}
	current, _, _ := unstructured.NestedString(sub.Object, "status", "currentCSV")
	if current == "" {
		start, _, _ := unstructured.NestedString(sub.Object, "spec", "startingCSV")
		if start == "" {
			start = op.versions[len(op.versions)-1]
		}
		f.offer(ctx, sub, start)
		return
	}
	ipName, _, _ := unstructured.NestedString(sub.Object, "status", "installPlanRef", "name")
	ip, err := dyn.Resource(gvrInstallPlan).Namespace(ns).Get(ctx, ipName, metav1.GetOptions{})
	if err != nil {
		return
	}
	approved, _, _ := unstructured.NestedBool(ip.Object, "spec", "approved")
	phase, _, _ := unstructured.NestedString(ip.Object, "status", "phase")
	if !approved || phase == "Complete" {
		installed, _, _ := unstructured.NestedString(sub.Object, "status", "installedCSV")
		if phase == "Complete" && installed == current {
			if idx := slices.Index(op.versions, current); idx >= 0 && idx < len(op.versions)-1 {
				f.offer(ctx, sub, op.versions[idx+1])
			}
		}
		return
	}
	unstructured.SetNestedField(ip.Object, "Complete", "status", "phase")
	dyn.Resource(gvrInstallPlan).Namespace(ns).UpdateStatus(ctx, ip, metav1.UpdateOptions{})
	csvPhase := "Succeeded"
	if op.crash || op.privileged && f.privilegedOperator(ctx, ns, pkg+"-operator", nil) {
		csvPhase = "Installing"
	}
	reason, message := "InstallWaiting", "installing: waiting for deployment "+pkg+" to become ready"
	if op.failCSV {
		csvPhase = "Failed"
	}
	if op.requirements {
		csvPhase, reason, message = "Failed", "RequirementsNotMet", "requirements no longer met"
	}
	csv := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
		"metadata": map[string]any{"name": current, "namespace": ns},
		"status":   map[string]any{"phase": csvPhase, "reason": reason, "message": message}}}
	dyn.Resource(gvrCSV).Namespace(ns).Create(ctx, csv, metav1.CreateOptions{})
	unstructured.SetNestedField(sub.Object, current, "status", "installedCSV")
	if idx := slices.Index(op.versions, current); idx >= 0 && idx < len(op.versions)-1 {
		// OLM resolves the replacement the catalog offers in the same sync that records the installed
		// CSV: the Subscription goes from this CSV to the next offer in one status write, never through
		// AtLatestKnown while an upgrade exists (which Run, without Expect, would rightly take as the end
		// of the channel, making TestRunUpgrade depend on when it polls).
		f.offer(ctx, sub, op.versions[idx+1])
	} else {
		unstructured.SetNestedField(sub.Object, "AtLatestKnown", "status", "state")
		dyn.Resource(gvrSubscription).Namespace(ns).UpdateStatus(ctx, sub, metav1.UpdateOptions{})
	}
	if op.crash {
		f.crashPod(ctx, ns, pkg)
	}
}

// recoverCSV moves the Subscription's installed CSV from Failed (RequirementsNotMet) to Succeeded, as OLM
// does once the requirements are back; it reports whether it did.
func (f *fakeCluster) recoverCSV(ctx context.Context, sub *unstructured.Unstructured) bool {
	installed, _, _ := unstructured.NestedString(sub.Object, "status", "installedCSV")
	if installed == "" {
		return false
	}
	csvs := f.c.dyn.Resource(gvrCSV).Namespace(sub.GetNamespace())
	csv, err := csvs.Get(ctx, installed, metav1.GetOptions{})
	if err != nil {
		return false
	}
	if phase, _, _ := unstructured.NestedString(csv.Object, "status", "phase"); phase != "Failed" {
		return false
	}
	unstructured.SetNestedMap(csv.Object, map[string]any{"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"}, "status")
	csvs.UpdateStatus(ctx, csv, metav1.UpdateOptions{})
	return true
}

// offer points the Subscription at csv with a new InstallPlan awaiting approval.
func (f *fakeCluster) offer(ctx context.Context, sub *unstructured.Unstructured, csv string) {
	ns := sub.GetNamespace()
	name := "install-" + strings.ReplaceAll(csv, ".", "-")
	ip := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"clusterServiceVersionNames": []any{csv}, "approval": "Manual", "approved": false},
		"status":   map[string]any{"phase": "RequiresApproval", "catalogSources": []any{}}}}
	f.c.dyn.Resource(gvrInstallPlan).Namespace(ns).Create(ctx, ip, metav1.CreateOptions{})
	unstructured.SetNestedField(sub.Object, csv, "status", "currentCSV")
	unstructured.SetNestedField(sub.Object, "UpgradePending", "status", "state")
	unstructured.SetNestedMap(sub.Object, map[string]any{"name": name, "namespace": ns, "kind": "InstallPlan"}, "status", "installPlanRef")
	f.c.dyn.Resource(gvrSubscription).Namespace(ns).UpdateStatus(ctx, sub, metav1.UpdateOptions{})
}

func (f *fakeCluster) crashPod(ctx context.Context, ns, pkg string) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pkg + "-operator-abc", Namespace: ns},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "operator", RestartCount: 5,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}},
		}}},
	}
	// the event first: Run collects diagnostics as soon as it sees the crashing pod
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: pkg + ".backoff", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: pod.Name}, Type: "Warning", Reason: "BackOff",
		Message: "Back-off restarting failed container operator", Count: 7, LastTimestamp: metav1.Now()}
	f.kube.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	f.kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
}

func (f *fakeCluster) connect(kubeconfig []byte) (*clients, error) {
	if string(kubeconfig) == "" {
		return nil, fmt.Errorf("empty kubeconfig")
	}
	// Run's writes step the simulation before they return (fakesync_test.go); the test reads f.c
	return &clients{core: f.c.core, dyn: stepAfterWrites{f.c.dyn, f}, apply: f.c.apply}, nil
}
