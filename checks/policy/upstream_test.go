package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// A removed API is one problem: on a bundle operator-framework's deprecated-APIs validator judges, its
// finding is the one reported, and policy-removed-api adds only what the validator does not know
// (a FlowSchema of flowcontrol v1beta3, removed in Kubernetes 1.32) or what it reports when the validator
// does not run.
func TestRemovedAPIReportedOnce(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	b := lastBundle(c)
	addObject(t, b, "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: olds.example.com}\nspec: {group: example.com, names: {kind: Old, plural: olds}, scope: Namespaced, version: v1}\n")
	addObject(t, b, "apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata: {name: old-flow}\nspec: {priorityLevelConfiguration: {name: x}}\n")
	both := Severities{ruleRemovedAPI: diag.Error, ruleOFDeprecatedAPIs: diag.Error}
	mentions := func(sev Severities, name string) (rules []string) {
		res, err := Run(t.Context(), Input{Catalog: c, Kubernetes: "1.33"}, sev)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range res.Diagnostics {
			if d.Bundle == b.Name && d.Severity == diag.Error && strings.Contains(d.Message, name) {
				rules = append(rules, d.Rule)
			}
		}
		return rules
	}
	if got := mentions(both, "olds.example.com"); len(got) != 1 || got[0] != ruleOFDeprecatedAPIs {
		t.Errorf("v1beta1 CRD with both rules on: reported by %v, want once by %s", got, ruleOFDeprecatedAPIs)
	}
	if got := mentions(both, "old-flow"); len(got) != 1 || got[0] != ruleRemovedAPI {
		t.Errorf("flowcontrol v1beta3 with both rules on: reported by %v, want once by %s", got, ruleRemovedAPI)
	}
	// operatorhubv2 runs the same deprecated-APIs check, in the same words
	if got := mentions(Severities{ruleRemovedAPI: diag.Error, ruleOFOperatorHub: diag.Error}, "olds.example.com"); len(got) != 1 || got[0] != ruleOFOperatorHub {
		t.Errorf("v1beta1 CRD with operatorhubv2 on: reported by %v, want once by %s", got, ruleOFOperatorHub)
	}
	if got := mentions(Severities{ruleRemovedAPI: diag.Error}, "olds.example.com"); len(got) != 1 || got[0] != ruleRemovedAPI {
		t.Errorf("v1beta1 CRD without the validator: reported by %v, want once by %s", got, ruleRemovedAPI)
	}
}

// coveredByOF is what operator-framework's deprecated-APIs validator flags: one object of each API of
// the removal table goes into a real bundle, and the validator must name exactly the covered ones.
func TestRemovedAPIsTheValidatorCovers(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	b := lastBundle(c)
	probes := map[string]removedAPI{}
	i := 0
	for api, minor := range removedIn() {
		apiVersion, kind, _ := strings.Cut(api, " ")
		name := fmt.Sprintf("probe-%d.example.com", i)
		i++
		probes[name] = removedAPI{api: api, name: name, minor: minor}
		spec := "{}"
		if kind == "CustomResourceDefinition" {
			spec = "{group: example.com, names: {kind: Probe, plural: probes}, scope: Namespaced, version: v1}"
		}
		addObject(t, b, fmt.Sprintf("apiVersion: %s\nkind: %s\nmetadata: {name: %s}\nspec: %s\n", apiVersion, kind, name, spec))
	}
	res, err := Run(t.Context(), Input{Catalog: c, Kubernetes: "1.40"}, Severities{ruleOFDeprecatedAPIs: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, d := range res.Diagnostics {
		if d.Bundle == b.Name && d.Severity == diag.Error {
			text.WriteString(d.Message + "\n")
		}
	}
	for name, a := range probes {
		if flagged := strings.Contains(text.String(), `"`+name+`"`); flagged != coveredByOF(a) {
			t.Errorf("%s: the validator flags it: %v, coveredByOF says %v", a.api, flagged, coveredByOF(a))
		}
	}
}
