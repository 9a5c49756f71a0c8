package smoke

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// groupPlan is the OperatorGroup Run creates for one package: its install mode and target namespaces
// ("" targets = all namespaces). Extra are namespaces to create besides the install namespace.
type groupPlan struct {
	Mode    string
	Targets []string
	Extra   []string
}

// planGroup picks the install mode from what the CSV supports, preferring AllNamespaces, then
// OwnNamespace, SingleNamespace (a sibling target namespace) and MultiNamespace (own + sibling). With
// no modes known it assumes AllNamespaces, the most common.
func planGroup(ns string, supported []string) (groupPlan, error) {
	if len(supported) == 0 {
		return groupPlan{Mode: "AllNamespaces"}, nil
	}
	target := ns + "-target"
	switch {
	case slices.Contains(supported, "AllNamespaces"):
		return groupPlan{Mode: "AllNamespaces"}, nil
	case slices.Contains(supported, "OwnNamespace"):
		return groupPlan{Mode: "OwnNamespace", Targets: []string{ns}}, nil
	case slices.Contains(supported, "SingleNamespace"):
		return groupPlan{Mode: "SingleNamespace", Targets: []string{target}, Extra: []string{target}}, nil
	case slices.Contains(supported, "MultiNamespace"):
		return groupPlan{Mode: "MultiNamespace", Targets: []string{ns, target}, Extra: []string{target}}, nil
	}
	return groupPlan{}, fmt.Errorf("the CSV supports no install mode (supported: %v)", supported)
}

// operatorGroup builds the OperatorGroup as unstructured: operator-framework/api's v1 package pulls in
// controller-runtime, which nothing else here needs.
func operatorGroup(ns string, p groupPlan) *unstructured.Unstructured {
	spec := map[string]any{}
	if len(p.Targets) > 0 {
		targets := make([]any, len(p.Targets))
		for i, t := range p.Targets {
			targets[i] = t
		}
		spec["targetNamespaces"] = targets
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "operators.coreos.com/v1",
		"kind":       "OperatorGroup",
		"metadata": map[string]any{
			"name":      "catalogbot-smoke",
			"namespace": ns,
			"labels":    map[string]any{managedLabel: "true"},
		},
		"spec": spec,
	}}
}
