package config

import (
	"fmt"
	"slices"
	"strings"
)

// PolicyConfig selects the policy stage's rules (checks/policy): the presets whose rules apply, then
// per-rule severities that override them.
//
//	policy:
//	  presets: [community, olmv1]
//	  rules:
//	    policy-skiprange-without-replaces: off
//	    policy-skipped-in-replaces-chain: error
//	  bundleImages: true
//
// Like every rule, it is read from the base branch's tip: a pull request cannot switch a rule off for
// itself. A policy section that does not decode blocks the change (ParseConfig fails); it never falls
// back to fewer rules.
type PolicyConfig struct {
	Presets []string          `yaml:"presets"`
	Rules   map[string]string `yaml:"rules"`
	// BundleImages lets the pull-request pipeline read a touched bundle's objects from its image when
	// the catalog holds only olm.csv.metadata, for the rules that need them (the CSV's icon, webhooks and
	// OperatorConditions, operator-framework's validators). Off, those rules judge what the catalog holds.
	BundleImages bool `yaml:"bundleImages"`
}

// Presets of policy rules. PresetNone (the default) enables nothing.
const (
	PresetNone      = "none"
	PresetCommunity = "community"
	PresetOLMv1     = "olmv1"
)

// Policy rule severities as .catalogbot.yaml writes them.
const (
	PolicyError   = "error"
	PolicyWarning = "warning"
	PolicyOff     = "off"
)

// PolicyRule is one rule of the policy stage: its id, what it checks, and its severity in each preset
// that enables it.
type PolicyRule struct {
	ID      string
	Summary string
	Presets map[string]string
}

// PolicyRules are every rule the policy stage knows, in the order they are documented. checks/policy
// implements each (its TestEveryConfiguredRuleIsImplemented holds the two lists together).
var PolicyRules = []PolicyRule{
	{"policy-dangling-bundle", "a bundle no channel head reaches through replaces, skips or skipRange", community(PolicyError)},
	{"policy-graph-loop", "a loop in a channel's upgrade graph (replaces, skips and skipRange edges)", community(PolicyError)},
	{"policy-graph-too-large", "a channel too large for the graph rules to check (always an error while a graph rule runs)", community(PolicyError)},
	{"policy-replaces-missing", "a replaces target that is not a bundle of the package in this catalog", community(PolicyError)},
	{"policy-skiprange-above-version", "a skipRange that covers the bundle's own version or a later one", community(PolicyError)},
	{"policy-skipped-in-replaces-chain", "a bundle both skipped and replaced (OLM stops the replaces chain at it)", community(PolicyWarning)},
	{"policy-skiprange-without-replaces", "olm.skipRange without replaces (prunes the upgrade graph)", community(PolicyWarning)},
	{"policy-dependency-unsatisfied", "an olm.package.required or olm.gvk.required no bundle of the catalog satisfies", community(PolicyError)},
	{"policy-dependency-conflict", "two packages' channel heads require one package in ranges no bundle of it satisfies together", community(PolicyError)},
	{"policy-csv-metadata-required", "olm.bundle.object in a catalog whose migrateLevel requires olm.csv.metadata", community(PolicyError)},
	{"policy-csv-required-fields", "a CSV field operator-pipelines requires is missing or malformed", community(PolicyError)},
	{"policy-network-policy", "a NetworkPolicy among the bundle's objects (OLM cannot install one)", community(PolicyError)},
	{"policy-bundle-size", "a manifest over 1 MiB or a bundle over 4 MiB gzipped (what OLM can store and unpack)", community(PolicyError)},
	{"policy-removed-api", "a bundle object whose API the catalog's Kubernetes version (1.(Y+13) for v4.Y) no longer serves", community(PolicyError)},
	{"policy-operator-name", "a bundle whose CSV name gives another operator name than its package or its package's other bundles", community(PolicyError)},
	{"policy-operator-name-unique", "a package whose bundles' CSV names give more than one operator name (when policy-operator-name is off)", community(PolicyError)},
	{"policy-api-version-constraints", "a bundle whose minKubeVersion is above the Kubernetes version its catalog serves, or not a version", community(PolicyWarning)},
	{"policy-operator-version-directory", "a changed bundle directory operators/<package>/<version>/ whose name is not its CSV's spec.version", community(PolicyError)},
	{"policy-using-fbc", "a changed bundle of a package whose ci.yaml does not enable fbc (operator-pipelines suggests file-based catalogs)", community(PolicyWarning)},
	{"policy-one-operator-per-change", "a change (pull request) that touches more than one operator", community(PolicyError)},
	{"policy-bundle-and-catalog-change", "a change that adds or edits a bundle (operators/<package>/<version>/) and a catalog together", community(PolicyError)},
	{"policy-one-template-per-catalog", "a package's catalog mapped from more than one template in its ci.yaml", community(PolicyError)},
	{"policy-ci-schema", "a changed operators/<package>/ci.yaml that does not follow operator-pipelines' ci.yaml schema", community(PolicyError)},
	{"policy-release-config", "a changed release-config.yaml naming a template the ci.yaml does not map, or semver channels other than Candidate/Fast/Stable", community(PolicyError)},
	{"policy-of-bundle", "operator-framework's bundle validator (sizes, service accounts, names, related images)", community(PolicyError)},
	{"policy-of-csv", "operator-framework's ClusterServiceVersion validator", community(PolicyError)},
	{"policy-of-crd", "operator-framework's CustomResourceDefinition validator", community(PolicyError)},
	{"policy-of-operatorhub", "operator-framework's OperatorHub v2 validator (operator-sdk's operatorhubv2)", community(PolicyError)},
	{"policy-of-capabilities", "operator-framework's standard capabilities validator", community(PolicyError)},
	{"policy-of-categories", "operator-framework's standard categories validator", community(PolicyError)},
	{"policy-of-deprecated-apis", "operator-framework's deprecated APIs validator (alpha-deprecated-apis, with the catalog's Kubernetes version)", community(PolicyError)},
	{"policy-of-good-practices", "operator-framework's good practices validator", community(PolicyError)},
	{"olmv1-bundle-format", "the bundle is not registry+v1", olmv1()},
	{"olmv1-all-namespaces", "the bundle does not support the AllNamespaces install mode", olmv1()},
	{"olmv1-dependencies", "the bundle declares olm.gvk.required, olm.package.required or olm.constraint", olmv1()},
	{"olmv1-operator-conditions", "the operator uses the OperatorConditions API", olmv1()},
	{"olmv1-webhooks", "the bundle has webhooks, which need a certificate provider under OLM v1", olmv1()},
}

func community(sev string) map[string]string { return map[string]string{PresetCommunity: sev} }
func olmv1() map[string]string               { return map[string]string{PresetOLMv1: PolicyWarning} }

// PolicyPresets are the presets a policy may name.
var PolicyPresets = []string{PresetNone, PresetCommunity, PresetOLMv1}

var severityRank = map[string]int{PolicyOff: 0, PolicyWarning: 1, PolicyError: 2}

// Severities resolves the policy: each rule at the highest severity any of its presets gives it, then
// overridden by rules. A rule absent from the result (or "off") does not run.
func (p PolicyConfig) Severities() map[string]string {
	out := map[string]string{}
	for _, r := range PolicyRules {
		for _, preset := range p.Presets {
			if sev, ok := r.Presets[preset]; ok && severityRank[sev] > severityRank[out[r.ID]] {
				out[r.ID] = sev
			}
		}
	}
	for id, sev := range p.Rules {
		out[id] = sev
	}
	for id, sev := range out {
		if sev == PolicyOff || sev == "" {
			delete(out, id)
		}
	}
	return out
}

// Enabled reports whether any policy rule runs.
func (p PolicyConfig) Enabled() bool { return len(p.Severities()) > 0 }

func policyRuleIDs() []string {
	ids := make([]string, len(PolicyRules))
	for i, r := range PolicyRules {
		ids[i] = r.ID
	}
	return ids
}

// validatePolicy checks the policy section: known presets (each once; none alone), known rule ids, and
// severities error, warning or off.
func (d *decoder) validatePolicy(p PolicyConfig) {
	seen := map[string]bool{}
	for i, preset := range p.Presets {
		ip := fmt.Sprintf("policy.presets[%d]", i)
		switch {
		case d.failed[ip]:
		case !slices.Contains(PolicyPresets, preset):
			hint := "one of: " + strings.Join(PolicyPresets, ", ")
			if s := closest(preset, PolicyPresets); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			d.errorAt(ip, "config-bad-value", hint, "policy.presets: %q is not a preset", preset)
		case seen[preset]:
			d.warnAt(ip, "config-duplicate-entry", "", "policy.presets: %q is listed twice", preset)
		case preset == PresetNone && len(p.Presets) > 1:
			d.errorAt(ip, "config-bad-value", "remove none, or the other presets", "policy.presets: none cannot be combined with other presets")
		}
		seen[preset] = true
	}
	ids := policyRuleIDs()
	for _, id := range sortedKeys(p.Rules) {
		kp := join("policy.rules", id)
		if !slices.Contains(ids, id) {
			hint := "known rules: " + strings.Join(ids, ", ")
			if s := closest(id, ids); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			d.errorAt(kp+"#key", "config-bad-value", hint, "policy.rules: %q is not a policy rule", id)
			continue
		}
		if sev := p.Rules[id]; !d.failed[kp] && !d.nulls[kp] && severityRank[sev] == 0 && sev != PolicyOff {
			d.errorAt(kp, "config-bad-value", "one of: error, warning, off", "policy.rules.%s: %q is not a severity", id, sev)
		} else if d.nulls[kp] {
			d.errorAt(kp, "config-bad-value", "one of: error, warning, off", "policy.rules.%s: a severity is required", id)
		}
	}
}
