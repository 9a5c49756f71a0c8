package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/catalog"
)

// The OLM v1 readiness rules (preset olmv1): what keeps operator-controller from installing a bundle.
const (
	ruleV1Format      = "olmv1-bundle-format"
	ruleV1AllNS       = "olmv1-all-namespaces"
	ruleV1Deps        = "olmv1-dependencies"
	ruleV1Conditions  = "olmv1-operator-conditions"
	ruleV1Webhooks    = "olmv1-webhooks"
	registryV1        = "registry+v1"
	operatorsAPIGroup = "operators.coreos.com"
)

var olmv1Rules = []string{ruleV1Format, ruleV1AllNS, ruleV1Deps, ruleV1Conditions, ruleV1Webhooks}

// olmv1 says, per bundle of the checked packages, why OLM v1 cannot install it. A bundle counts as
// checked when its CSV (object or olm.csv.metadata) is in the catalog, and as installable when no olmv1
// rule found anything; bundles whose CSV is only in the image are neither.
func (r *run) olmv1() {
	if !r.on(olmv1Rules...) {
		return
	}
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			b := bi.b
			c := r.contentOf(b)
			reasons := 0
			add := func(rule, msg, hint string) {
				if r.sev[rule] == "" {
					return
				}
				reasons++
				r.add(finding{rule: rule, pos: b.Pos, pkg: p.name, bundle: b.Name, msg: "OLM v1 cannot install bundle " + fmt.Sprintf("%q", b.Name) + ": " + msg, hint: hint})
			}
			if c.mediatype != "" && c.mediatype != registryV1 {
				add(ruleV1Format, fmt.Sprintf("its format is %s; OLM v1 installs registry+v1 bundles only", c.mediatype), "publish the operator as a registry+v1 bundle")
			}
			var deps []string
			for _, t := range []string{catalog.PropertyGVKRequired, catalog.PropertyPackageRequired, "olm.constraint"} {
				if hasProperty(b, t) {
					deps = append(deps, t)
				}
			}
			if len(deps) > 0 {
				add(ruleV1Deps, "it declares dependencies ("+strings.Join(deps, ", ")+"), which OLM v1 does not resolve",
					"install the dependencies separately and drop the properties, or document them")
			}
			if c.hasCSV {
				if !c.allNamespaces {
					add(ruleV1AllNS, "it does not support the AllNamespaces install mode (OLM v1 installs cluster-wide; Single/OwnNamespace only behind an alpha gate)",
						"support AllNamespaces in the CSV's installModes")
				}
				if c.operatorConditions {
					add(ruleV1Conditions, "its operator uses the OperatorConditions API (operators.coreos.com operatorconditions), which OLM v1 does not serve",
						"stop relying on OperatorConditions (e.g. Upgradeable) before moving to OLM v1")
				}
				if n := c.webhooks; n > 0 {
					add(ruleV1Webhooks, fmt.Sprintf("its CSV defines %d webhooks, whose certificates OLM v1 takes from a certificate provider (cert-manager or the OpenShift service CA)", n),
						"make sure the clusters run a certificate provider OLM v1 is configured with")
				}
				r.res.OLMv1Checked++
				if reasons == 0 {
					r.res.OLMv1Installable++
				}
			}
		}
	}
}

func supports(modes []catalog.InstallMode, typ string) bool {
	return slices.ContainsFunc(modes, func(m catalog.InstallMode) bool { return m.Type == typ && m.Supported })
}

func usesOperatorConditions(c *csvFields) bool {
	for _, p := range append(slices.Clone(c.Install.Spec.Permissions), c.Install.Spec.ClusterPermissions...) {
		for _, rule := range p.Rules {
			group := slices.Contains(rule.APIGroups, operatorsAPIGroup) || slices.Contains(rule.APIGroups, "*")
			if group && (slices.Contains(rule.Resources, "operatorconditions") || slices.Contains(rule.Resources, "operatorconditions/status")) {
				return true
			}
		}
	}
	return false
}
