package policy

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// ruleRemovedAPI: a bundle object whose API the Kubernetes version the catalog serves no longer has.
const ruleRemovedAPI = "policy-removed-api"

// removedIn maps "group/version Kind" to the Kubernetes minor version that stopped serving it (the
// Kubernetes deprecation guide). A table by version, not by OpenShift release: a catalog v4.Y serves
// Kubernetes 1.(Y+13) (config.KubernetesOf), whatever Y is.
// Built on first use: nothing is built at start-up that a verb may not need.
var removedIn = sync.OnceValue(func() map[string]int {
	removed := map[string]int{}
	for minor, apis := range map[int][]string{
		16: {"extensions/v1beta1 Deployment", "extensions/v1beta1 DaemonSet", "extensions/v1beta1 ReplicaSet",
			"extensions/v1beta1 NetworkPolicy", "extensions/v1beta1 PodSecurityPolicy",
			"apps/v1beta1 Deployment", "apps/v1beta1 StatefulSet", "apps/v1beta2 Deployment", "apps/v1beta2 DaemonSet",
			"apps/v1beta2 ReplicaSet", "apps/v1beta2 StatefulSet"},
		22: {"admissionregistration.k8s.io/v1beta1 MutatingWebhookConfiguration", "admissionregistration.k8s.io/v1beta1 ValidatingWebhookConfiguration",
			"apiextensions.k8s.io/v1beta1 CustomResourceDefinition", "apiregistration.k8s.io/v1beta1 APIService",
			"authentication.k8s.io/v1beta1 TokenReview", "authorization.k8s.io/v1beta1 SubjectAccessReview",
			"authorization.k8s.io/v1beta1 LocalSubjectAccessReview", "authorization.k8s.io/v1beta1 SelfSubjectAccessReview",
			"certificates.k8s.io/v1beta1 CertificateSigningRequest", "coordination.k8s.io/v1beta1 Lease",
			"extensions/v1beta1 Ingress", "networking.k8s.io/v1beta1 Ingress", "networking.k8s.io/v1beta1 IngressClass",
			"rbac.authorization.k8s.io/v1beta1 ClusterRole", "rbac.authorization.k8s.io/v1beta1 ClusterRoleBinding",
			"rbac.authorization.k8s.io/v1beta1 Role", "rbac.authorization.k8s.io/v1beta1 RoleBinding",
			"scheduling.k8s.io/v1beta1 PriorityClass", "storage.k8s.io/v1beta1 CSIDriver", "storage.k8s.io/v1beta1 CSINode",
			"storage.k8s.io/v1beta1 StorageClass", "storage.k8s.io/v1beta1 VolumeAttachment"},
		25: {"batch/v1beta1 CronJob", "discovery.k8s.io/v1beta1 EndpointSlice", "events.k8s.io/v1beta1 Event",
			"autoscaling/v2beta1 HorizontalPodAutoscaler", "policy/v1beta1 PodDisruptionBudget", "policy/v1beta1 PodSecurityPolicy",
			"node.k8s.io/v1beta1 RuntimeClass"},
		26: {"flowcontrol.apiserver.k8s.io/v1beta1 FlowSchema", "flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration",
			"autoscaling/v2beta2 HorizontalPodAutoscaler"},
		27: {"storage.k8s.io/v1beta1 CSIStorageCapacity"},
		29: {"flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema", "flowcontrol.apiserver.k8s.io/v1beta2 PriorityLevelConfiguration"},
		32: {"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema", "flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration"},
	} {
		for _, api := range apis {
			removed[api] = minor
		}
	}
	return removed
})

// removedAPI is one of a bundle's objects whose API some Kubernetes version removed.
type removedAPI struct {
	api   string // "group/version Kind"
	name  string
	minor int
}

func removal(apiVersion, kind, name string) (removedAPI, bool) {
	api := apiVersion + " " + kind
	minor, ok := removedIn()[api]
	return removedAPI{api: api, name: name, minor: minor}, ok
}

// kubeMinor is the minor version of a Kubernetes version "1.29", "v1.29" or "1.29.3" (ok false when it is
// not one).
func kubeMinor(v string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(strings.TrimSpace(v), "v"), "1.")
	if !ok {
		return 0, false
	}
	minor, patch, hasPatch := strings.Cut(rest, ".")
	if len(minor) == 0 || len(minor) > 3 || !allDigits(minor) || hasPatch && (patch == "" || !allDigits(patch)) {
		return 0, false
	}
	n, err := strconv.Atoi(minor)
	return n, err == nil
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// coveredByOF reports whether operator-framework's deprecated-APIs check flags a, as an error whenever
// this rule would (it knows the removals of Kubernetes 1.22, 1.25 and 1.26, and is given the same
// Kubernetes version). Both alpha-deprecated-apis and operatorhubv2 run it, in the same words: on a bundle
// either judged, a is their finding, not this rule's
// (TestRemovedAPIsTheValidatorCovers holds this to the validator).
func coveredByOF(a removedAPI) bool {
	return a.minor == 22 || a.minor == 25 || a.api == "autoscaling/v2beta2 HorizontalPodAutoscaler"
}

func (r *run) removedAPIs() {
	if !r.on(ruleRemovedAPI) {
		return
	}
	minor, ok := r.kubeMinor(ruleRemovedAPI)
	if !ok { // nothing to judge against, and the report says so
		return
	}
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			byOF := r.ofJudged[bi.b] && r.on(ruleOFDeprecatedAPIs, ruleOFOperatorHub)
			for _, a := range r.contentOf(bi.b).removed {
				if a.minor > minor || byOF && coveredByOF(a) {
					continue
				}
				r.add(finding{rule: ruleRemovedAPI, pos: bi.b.Pos, pkg: p.name, bundle: bi.b.Name,
					msg: fmt.Sprintf("bundle %q ships %s %q, an API Kubernetes 1.%d removed: the catalog%s serves Kubernetes %s, where OLM cannot install it",
						bi.b.Name, a.api, a.name, a.minor, r.inCatalog(), r.in.Kubernetes),
					hint: "move the manifest to the API's current version and rebuild the bundle, or leave this catalog version out of the package's mapping"})
			}
		}
	}
}
