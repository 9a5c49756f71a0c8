package smoke

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// Attack: a pull request's operator asks for a privileged pod on the host's network with the node's /
// mounted. kind nodes are privileged containers on the machine that runs the smoke (the App's host), so
// such a pod reaches that machine. Every namespace the smoke creates, for either OLM, enforces the Pod
// Security Standard of Options.PodSecurity (restricted by default): the cluster refuses the pods, the
// install fails with the admission's reason as its lead diagnostic and the operator never runs.
func TestRunPrivilegedOperatorIsRefusedByPodSecurity(t *testing.T) {
	for _, tc := range []struct {
		name, olm, level, want string
	}{
		{"v0 restricted by default", OLMv0, "", PodSecurityRestricted},
		{"v0 baseline", OLMv0, PodSecurityBaseline, PodSecurityBaseline},
		{"v1 restricted by default", OLMv1, "", PodSecurityRestricted},
		{"v1 baseline", OLMv1, PodSecurityBaseline, PodSecurityBaseline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := map[string]fakeOperator{
				"good":    {versions: []string{"good.v1"}},
				"hostile": {versions: []string{"hostile.v1"}, privileged: true},
			}
			var f *fakeCluster
			opts := Options{KubeconfigPath: writeKubeconfig(t), CatalogImage: testDigest, Packages: []string{"good", "hostile"},
				Timeout: 5 * time.Second, Keep: true, PodSecurity: tc.level}
			namespaces := []string{"smoke-good", "smoke-hostile"}
			if tc.olm == OLMv1 {
				f, _ = newFakeV1(t, true, ops)
				o := v1Options("good", "hostile")
				o.Keep, o.PodSecurity = true, tc.level
				opts = o
			} else {
				f = newFakeCluster(t, true, ops)
				// SingleNamespace: the sibling target namespace the smoke creates is labelled too
				opts.InstallModes = map[string][]string{"hostile": {"SingleNamespace"}}
				namespaces = append(namespaces, "smoke-hostile-target")
			}
			b := &fakeBackend{exists: true}
			if opts.ClusterName == "" {
				b = nil
			}
			res, err, progress := runFake(t, f, b, opts)
			if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid || !strings.Contains(err.Error(), "hostile") {
				t.Fatalf("err = %v (category %v), want the hostile package's failure\n%s", err, diag.CategoryOf(err), progress)
			}
			if len(f.escaped) > 0 {
				t.Fatalf("the privileged operator ran in %v", f.escaped)
			}
			byName := byPackage(res)
			if !byName["good"].Succeeded {
				t.Errorf("good: %+v", byName["good"])
			}
			h := byName["hostile"]
			if h.Succeeded || len(h.Diagnostics) == 0 {
				t.Fatalf("hostile = %+v", h)
			}
			lead := h.Diagnostics[0]
			for _, want := range []string{`violates PodSecurity "` + tc.want + `:latest"`, "privileged (container \"operator\"", "hostPath volumes", "Deployment smoke-hostile/hostile-"} {
				if !strings.Contains(lead.Message, want) {
					t.Errorf("lead diagnostic lacks %q: %+v", want, lead)
				}
			}
			if lead.Rule != "pod-security" || lead.Bundle != "hostile.v1" || lead.Severity != diag.Error {
				t.Errorf("lead diagnostic = %+v", lead)
			}
			for _, ns := range namespaces {
				n, err := f.kube.CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{})
				if err != nil {
					t.Fatalf("namespace %s: %v", ns, err)
				}
				for _, mode := range []string{"enforce", "warn", "audit"} {
					if n.Labels[podSecurityPrefix+mode] != tc.want || n.Labels[podSecurityPrefix+mode+"-version"] != "latest" {
						t.Errorf("namespace %s labels = %v, want %s=%s at latest", ns, n.Labels, mode, tc.want)
					}
				}
			}
		})
	}
}

// A cluster that does not enforce Pod Security Admission (no PodSecurity plugin, or the smoke's
// namespaces exempted) would run whatever a pull request's operator asks for: the smoke proves the
// enforcement with a dry-run privileged pod in each namespace it creates and installs nothing where it
// is admitted. That is the cluster's fault: infrastructure, not the change's.
func TestRunRefusesAClusterWithoutPodSecurity(t *testing.T) {
	for _, olm := range []string{OLMv0, OLMv1} {
		t.Run(olm, func(t *testing.T) {
			ops := map[string]fakeOperator{"hostile": {versions: []string{"hostile.v1"}, privileged: true}}
			var f *fakeCluster
			var b *fakeBackend
			opts := Options{KubeconfigPath: writeKubeconfig(t), CatalogImage: testDigest, Packages: []string{"hostile"}, Timeout: 5 * time.Second}
			if olm == OLMv1 {
				f, _ = newFakeV1(t, true, ops)
				opts, b = v1Options("hostile"), &fakeBackend{exists: true}
			} else {
				f = newFakeCluster(t, true, ops)
			}
			f.noAdmission = true
			res, err, progress := runFake(t, f, b, opts)
			if !errors.Is(err, ErrPackagesFailed) || diag.CategoryOf(err) != diag.Infra {
				t.Fatalf("err = %v (category %v), want an infrastructure failure\n%s", err, diag.CategoryOf(err), progress)
			}
			if len(f.escaped) > 0 {
				t.Fatalf("the privileged operator ran in %v", f.escaped)
			}
			lead := res.Packages[0].Diagnostics[0]
			if lead.Rule != ruleNotEnforced || !strings.Contains(lead.Message, "does not enforce Pod Security Admission") {
				t.Errorf("lead diagnostic = %+v", lead)
			}
			_, serr := f.c.dyn.Resource(gvrSubscription).Namespace("smoke-hostile").Get(context.Background(), "hostile", metav1.GetOptions{})
			_, cerr := f.c.dyn.Resource(gvrClusterExtension).Get(context.Background(), "smoke-hostile", metav1.GetOptions{})
			if !apierrors.IsNotFound(serr) || !apierrors.IsNotFound(cerr) {
				t.Errorf("something was installed: Subscription %v, ClusterExtension %v", serr, cerr)
			}
		})
	}
}

// The smoke never runs with the privileged standard, and the kind nodes it creates never mount the
// host's / or its container engine: the operators it installs run on those nodes.
func TestOptionsRefuseHostAccess(t *testing.T) {
	ok := Options{ClusterName: "x", CreateCluster: true, CatalogImage: testDigest, Packages: []string{"a"}}
	requireRefused(t, ok, map[string]optionsCase{
		"privileged": {func(o *Options) { o.PodSecurity = "privileged" }, `pod security "privileged"`},
		"root": {func(o *Options) {
			o.KindConfig = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n  extraMounts:\n  - hostPath: /\n    containerPath: /host\n"
		}, "nodes[0].extraMounts mounts the host's / (its root)"},
		"docker socket": {func(o *Options) {
			o.KindConfig = "nodes:\n- extraMounts:\n  - {hostPath: /tmp/ok, containerPath: /ok}\n- extraMounts:\n  - {hostPath: /var/run/docker.sock, containerPath: /var/run/docker.sock}\n"
		}, "nodes[1].extraMounts mounts the host's /var/run/docker.sock"},
		"parent of the engine": {func(o *Options) { o.KindConfig = "nodes:\n- extraMounts:\n  - {hostPath: /var/, containerPath: /v}\n" }, "the container engine's /var/run/docker.sock"},
		"a socket": {func(o *Options) {
			o.KindConfig = "nodes:\n- extraMounts:\n  - {hostPath: /srv/app/agent.sock, containerPath: /a}\n"
		}, "(a socket)"},
		"unreadable": {func(o *Options) { o.KindConfig = "nodes: {" }, "kind config:"},
	})
	fine := ok
	fine.PodSecurity = PodSecurityBaseline
	fine.KindConfig = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnetworking:\n  disableDefaultCNI: true\nnodes:\n- role: control-plane\n  extraMounts:\n  - {hostPath: /srv/smoke/cache, containerPath: /cache}\n"
	if err := fine.withDefaults().validate(); err != nil {
		t.Errorf("baseline and a harmless mount refused: %v", err)
	}
	if got := ok.withDefaults().PodSecurity; got != PodSecurityRestricted {
		t.Errorf("default pod security = %q", got)
	}
}

// Workloads other than Deployments (a StatefulSet, a Job) say the admission refused their pods only
// through FailedCreate events; other FailedCreate events (a missing ServiceAccount, a quota) are not
// Pod Security's.
func TestAdmissionRefusalFromEvents(t *testing.T) {
	f := newFakeCluster(t, false, nil)
	ctx := context.Background()
	event := func(name, kind, msg string) {
		f.kube.CoreV1().Events("ns").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Type: "Warning", Reason: "FailedCreate", Message: msg}, metav1.CreateOptions{})
	}
	event("early", "ReplicaSet", `Error creating: pods "early-x" is forbidden: error looking up service account ns/op: serviceaccount "op" not found`)
	if got := admissionRefusal(ctx, f.c, "ns"); got != "" {
		t.Fatalf("a missing ServiceAccount taken for Pod Security: %q", got)
	}
	event("db", "StatefulSet", `create Pod db-0 in StatefulSet db failed error: pods "db-0" is forbidden: violates PodSecurity "restricted:latest": host namespaces (hostPID=true)`)
	if got := admissionRefusal(ctx, f.c, "ns"); !strings.HasPrefix(got, "StatefulSet ns/db: ") || !strings.Contains(got, "hostPID=true") {
		t.Errorf("refusal = %q", got)
	}
}
