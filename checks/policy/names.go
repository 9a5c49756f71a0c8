package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// operator-pipelines' operator-name and version-constraint checks, judged on the catalog: a bundle's
// name is its CSV's metadata.name (opm render names it so), and a catalog vX.Y serves OpenShift X.Y,
// which is what com.redhat.openshift.versions selects.
const (
	ruleOperatorName       = "policy-operator-name"
	ruleOperatorNameUnique = "policy-operator-name-unique"
	ruleAPIVersions        = "policy-api-version-constraints"
)

var nameRules = []string{ruleOperatorName, ruleOperatorNameUnique, ruleAPIVersions}

// csvOperatorName is the operator name of a CSV's metadata.name: what comes before its first dot.
func csvOperatorName(bundle string) string {
	name, _, _ := strings.Cut(bundle, ".")
	return name
}

// operatorNames applies check_operator_name (common/bundle.py) and check_operator_name_unique
// (community/operator.py). A bundle whose CSV names another operator than its package is an error when
// the package's other bundles agree on a name it does not use, or when it is the package's only bundle
// (upstream fails those), and a warning otherwise (upstream warns: infinispan's bundles are all
// infinispan-operator.v*). Bundles that use several names are one finding of the unique rule only when
// policy-operator-name does not run: that rule has then already reported every bundle involved.
func (r *run) operatorNames() {
	if !r.on(ruleOperatorName, ruleOperatorNameUnique) {
		return
	}
	for _, p := range r.ix.order {
		names := map[string]int{}
		for _, bi := range p.bundles {
			names[csvOperatorName(bi.b.Name)]++
		}
		if !r.on(ruleOperatorName) {
			if len(names) > 1 && len(p.bundles) > 0 {
				b := p.bundles[0].b
				r.add(finding{rule: ruleOperatorNameUnique, pos: b.Pos, pkg: p.name, bundle: b.Name,
					msg:  fmt.Sprintf("the bundles of package %q use %d operator names in their CSV names: %s", p.name, len(names), strings.Join(sortedKeys(names), ", ")),
					hint: "name every CSV <operator>.v<version> with the same operator name"})
			}
			continue
		}
		for _, bi := range p.bundles {
			own := csvOperatorName(bi.b.Name)
			others := map[string]int{}
			for n, k := range names {
				if n == own {
					k--
				}
				if k > 0 {
					others[n] = k
				}
			}
			var common string
			if len(others) == 1 {
				common = sortedKeys(others)[0]
			}
			f := finding{rule: ruleOperatorName, pos: bi.b.Pos, pkg: p.name, bundle: bi.b.Name,
				hint: "name the CSV " + p.name + ".v<version>, as the package and its other bundles do"}
			switch {
			case common != "" && common != own:
				f.msg = fmt.Sprintf("bundle %q: the operator name of its CSV (%s) is not the one the package's other bundles use (%s)", bi.b.Name, own, common)
				r.add(f)
			case own != p.name && len(others) == 0:
				f.msg = fmt.Sprintf("bundle %q: the operator name of its CSV (%s) is not its package's (%s)", bi.b.Name, own, p.name)
				r.add(f)
			case own != p.name:
				f.msg = fmt.Sprintf("bundle %q: the operator name of its CSV (%s) is not its package's (%s); operator-pipelines warns once other bundles exist", bi.b.Name, own, p.name)
				r.addWarning(f)
			}
		}
	}
}

func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// kubeVersion is a minKubeVersion as operator-pipelines parses it (Python semver with optional minor and
// patch, prerelease and build dropped).
var kubeVersion = regexp.MustCompile(`^(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*))?)?(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)

// parseKube returns a version's major, minor and patch.
func parseKube(v string) ([3]int, bool) {
	m := kubeVersion.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return [3]int{}, false
	}
	var out [3]int
	for i := range out {
		if m[i+1] != "" {
			n, err := strconv.Atoi(m[i+1])
			if err != nil {
				return [3]int{}, false
			}
			out[i] = n
		}
	}
	return out, true
}

// apiVersionConstraints applies check_api_version_constraints: a bundle's minKubeVersion above the
// Kubernetes version its catalog serves conflicts with the OpenShift version the catalog is for (OLM on
// that cluster refuses to install it). The community preset makes it a warning: upstream runs the check
// only on operators without fbc (skip_fbc), and merged openstack-lightspeed-operator 0.0.1 (minKubeVersion
// 1.31.0) into v4.16. A minKubeVersion that does not parse is this rule's error unless
// operator-framework's csv or operatorhubv2 validator judged the bundle (they report it, in the same
// words). Without the catalog's Kubernetes version the rule cannot run, and a note says so once.
func (r *run) apiVersionConstraints() {
	if !r.on(ruleAPIVersions) {
		return
	}
	minor, known := r.kubeMinor(ruleAPIVersions)
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			c := r.contentOf(bi.b)
			if c.minKube == "" {
				continue
			}
			f := finding{rule: ruleAPIVersions, pos: bi.b.Pos, pkg: p.name, bundle: bi.b.Name}
			v, ok := parseKube(c.minKube)
			switch {
			case !ok:
				if r.ofJudged[bi.b] && r.on(ruleOFCSV, ruleOFOperatorHub) {
					continue
				}
				f.msg = fmt.Sprintf("bundle %q: minKubeVersion %q is not a version", bi.b.Name, c.minKube)
				f.hint = "set spec.minKubeVersion to a version such as 1.29.0"
				r.add(f)
			case known && (v[0] > 1 || v[0] == 1 && v[1] > minor):
				serves := "the catalog"
				if r.in.Name != "" {
					serves = "catalog " + r.in.Name
				}
				f.msg = fmt.Sprintf("bundle %q needs Kubernetes %s (minKubeVersion) but %s serves Kubernetes %s: OLM there refuses to install it",
					bi.b.Name, c.minKube, serves, r.in.Kubernetes)
				f.hint = "leave this catalog version out of the package's mapping, or lower minKubeVersion if the operator runs there"
				r.add(f)
			}
		}
	}
}

// kubeMinor is the minor version of the Kubernetes the catalog serves; when it is not known, a note says
// rule did not run.
func (r *run) kubeMinor(rule string) (int, bool) {
	minor, ok := kubeMinor(r.in.Kubernetes)
	if !ok {
		r.cannotRun(rule, "the Kubernetes version the catalog serves is not known",
			"catalogs in a template-driven repository (catalogs: in .catalogbot.yaml) have one: v4.Y serves 1.(Y+13), or kubernetes: sets it")
	}
	return minor, ok
}

// cannotRun says once, in a note, that rule did not run on the catalog and why.
func (r *run) cannotRun(rule, why, hint string) {
	r.sink.Add(diag.Diagnostic{Severity: diag.Note, Check: Check, Rule: rule,
		Message: fmt.Sprintf("%s did not run%s: %s", rule, r.inCatalog(), why), Hint: hint})
}

// objectRules judge a bundle's objects (olm.bundle.object), which a catalog migrated to olm.csv.metadata
// does not carry.
var objectRules = append([]string{ruleNetworkPolicy, ruleSize, ruleRemovedAPI, ruleV1Conditions, ruleV1Webhooks}, ofRules...)

// objectsMissing says once, in a note, which enabled rules could not judge how many checked bundles
// because the catalog holds no objects for them (and none were read from their images): a rule that
// cannot run is never silent.
func (r *run) objectsMissing() {
	var on []string
	for _, id := range objectRules {
		if r.on(id) {
			on = append(on, id)
		}
	}
	if len(on) == 0 {
		return
	}
	missing, checked := 0, 0
	for _, p := range r.ix.order {
		for _, bi := range p.bundles {
			checked++
			if r.contentOf(bi.b).objects == 0 {
				missing++
			}
		}
	}
	if missing == 0 {
		return
	}
	r.sink.Add(diag.Diagnostic{Severity: diag.Note, Check: Check, Rule: on[0],
		Message: fmt.Sprintf("%s did not judge %d of the %d checked bundles%s: the catalog holds them without their objects (olm.csv.metadata)",
			strings.Join(on, ", "), missing, checked, r.inCatalog()),
		Hint: "policy.bundleImages: true in .catalogbot.yaml lets the pull-request pipeline read the objects from the bundle images"})
}
