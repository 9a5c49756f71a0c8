package policy

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	interfaces "github.com/operator-framework/api/pkg/validation/interfaces"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

// editObject rewrites the first object of kind among b's olm.bundle.object properties with edit.
func editObject(t *testing.T, b *catalog.Bundle, kind string, edit func(obj map[string]any)) {
	t.Helper()
	for i, p := range b.Properties {
		if p.Type != catalog.PropertyBundleObject {
			continue
		}
		var bo catalog.BundleObject
		if err := json.Unmarshal(p.Value, &bo); err != nil {
			t.Fatal(err)
		}
		js, err := yaml.YAMLToJSON(bo.Data)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(js, &obj); err != nil {
			t.Fatal(err)
		}
		if obj["kind"] != kind {
			continue
		}
		edit(obj)
		bo.Data, _ = json.Marshal(obj)
		b.Properties[i].Value, _ = json.Marshal(bo)
		return
	}
	t.Fatalf("bundle %s has no %s object", b.Name, kind)
}

func annotate(csv map[string]any, key, value string) {
	md := csv["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[key] = value
}

// Each policy-of-* rule on a real bundle (coherence-operator's newest in v4.16, which passes them all)
// and on that bundle edited the way a contributor could slip past a reviewer.
func TestOperatorFrameworkValidatorRules(t *testing.T) {
	for _, tc := range []struct {
		rule, kube string
		edit       func(t *testing.T, c *catalog.Catalog)
		want       string
		sev        diag.Severity
	}{
		{ruleOFBundle, "", func(t *testing.T, c *catalog.Catalog) {
			editCSV(t, lastBundle(c), func(csv map[string]any) {
				csv["spec"].(map[string]any)["relatedImages"] = []any{map[string]any{"name": "operator", "image": ""}}
			})
		}, "relatedImages[0] has an empty image field", diag.Error},
		{ruleOFCSV, "", func(t *testing.T, c *catalog.Catalog) {
			editCSV(t, lastBundle(c), func(csv map[string]any) { csv["spec"].(map[string]any)["installModes"] = []any{} })
		}, "install modes", diag.Error},
		{ruleOFCRD, "", func(t *testing.T, c *catalog.Catalog) {
			editObject(t, lastBundle(c), "CustomResourceDefinition", func(crd map[string]any) { crd["spec"].(map[string]any)["scope"] = "Everywhere" })
		}, "spec.scope", diag.Error},
		{ruleOFOperatorHub, "", func(t *testing.T, c *catalog.Catalog) {
			editCSV(t, lastBundle(c), func(csv map[string]any) {
				csv["spec"].(map[string]any)["maintainers"] = []any{map[string]any{"name": "x", "email": "not-an-email"}}
			})
		}, "email not-an-email is invalid", diag.Error},
		{ruleOFCapabilities, "", func(t *testing.T, c *catalog.Catalog) {
			editCSV(t, lastBundle(c), func(csv map[string]any) { annotate(csv, "capabilities", "Magic") })
		}, "Magic", diag.Error},
		{ruleOFCategories, "", func(t *testing.T, c *catalog.Catalog) {
			editCSV(t, lastBundle(c), func(csv map[string]any) { annotate(csv, "categories", "Nonsense") })
		}, "Nonsense", diag.Error},
		{ruleOFDeprecatedAPIs, "1.25", func(t *testing.T, c *catalog.Catalog) {
			addObject(t, lastBundle(c), "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: pdb}\nspec: {minAvailable: 1}\n")
		}, "PodDisruptionBudget", diag.Error},
		{ruleOFGoodPractices, "", func(t *testing.T, c *catalog.Catalog) {
			// a channel name off the convention is not among them: operator-sdk reads no channels
			// (TestOperatorFrameworkValidatorsMatchOperatorSDK)
			editCSV(t, lastBundle(c), func(csv map[string]any) {
				deployments := csv["spec"].(map[string]any)["install"].(map[string]any)["spec"].(map[string]any)["deployments"].([]any)
				pod := deployments[0].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
				pod["containers"].([]any)[0].(map[string]any)["resources"] = map[string]any{}
			})
		}, "unable to find the resource requests for the container", diag.Warning},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			c := load(t, "community-operators-prod-v4.16", "coherence-operator")
			in := Input{Catalog: c, Kubernetes: tc.kube, Packages: map[string]bool{"coherence-operator": true}}
			for _, d := range check(t, in, tc.rule) {
				if d.Bundle == lastBundle(c).Name {
					t.Fatalf("the real bundle: %v", d)
				}
			}
			tc.edit(t, c)
			c = reload(c)
			in.Catalog = c
			var hits []diag.Diagnostic
			for _, d := range check(t, in, tc.rule) {
				if d.Bundle == lastBundle(c).Name && strings.Contains(d.Message, tc.want) {
					hits = append(hits, d)
				}
			}
			if len(hits) == 0 || hits[0].Severity != tc.sev {
				t.Fatalf("edited bundle: no %s finding with %q: %v", tc.sev, tc.want, check(t, in, tc.rule))
			}
		})
	}
}

// reload gives c's bundles fresh decoded contents (Run decodes each bundle once per run).
func reload(c *catalog.Catalog) *catalog.Catalog {
	out := *c
	out.Bundles = make([]*catalog.Bundle, len(c.Bundles))
	for i, b := range c.Bundles {
		nb := *b
		out.Bundles[i] = &nb
	}
	return &out
}

// A rule set to warning reports the validator's errors as warnings; off does not run it.
func TestOperatorFrameworkValidatorSeverity(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	editCSV(t, lastBundle(c), func(csv map[string]any) { annotate(csv, "categories", "Nonsense") })
	res, err := Run(t.Context(), Input{Catalog: c}, Severities{ruleOFCategories: diag.Warning})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) == 0 || slices.ContainsFunc(res.Diagnostics, func(d diag.Diagnostic) bool { return d.Severity != diag.Warning }) {
		t.Fatalf("at warning: %v", res.Diagnostics)
	}
	res, err = Run(t.Context(), Input{Catalog: reload(c)}, Severities{ruleOFCSV: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(res.Diagnostics, func(d diag.Diagnostic) bool { return d.Rule == ruleOFCategories }) {
		t.Fatalf("categories is off: %v", res.Diagnostics)
	}
}

// What a hostile bundle could do to the validators: objects they cannot read, two CSVs, a validator
// that panics. Each is an error of the bundle, never a pass and never a crash.
func TestOperatorFrameworkValidatorsOnHostileBundles(t *testing.T) {
	for name, edit := range map[string]func(t *testing.T, b *catalog.Bundle){
		"spec is a string": func(t *testing.T, b *catalog.Bundle) {
			editCSV(t, b, func(csv map[string]any) { csv["spec"] = "nothing" })
		},
		"two CSVs": func(t *testing.T, b *catalog.Bundle) {
			addObject(t, b, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: other.v1.0.0}\nspec: {}\n")
		},
		"a CRD of an unknown version": func(t *testing.T, b *catalog.Bundle) {
			addObject(t, b, "apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nmetadata: {name: x.example.com}\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := load(t, "community-operators-prod-v4.16", "coherence-operator")
			b := lastBundle(c)
			edit(t, b)
			ds := check(t, Input{Catalog: c}, ruleOFBundle)
			if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool {
				return d.Bundle == b.Name && d.Severity == diag.Error && strings.Contains(d.Message, "cannot read bundle")
			}) {
				t.Fatalf("%v", ds)
			}
		})
	}
	panics := interfaces.ValidatorFunc(func(...any) []apierrors.ManifestResult { panic("index out of range") })
	if _, err := runValidator(panics, nil); err == nil || !strings.Contains(err.Error(), "index out of range") {
		t.Fatalf("a panicking validator: %v", err)
	}
}

// The CRD validator reports spec.preserveUnknownFields by pointer, which operator-sdk prints as an
// address: the finding names the value instead, so two runs on the same bundle report the same text.
func TestOperatorFrameworkFindingsSayTheSameEachRun(t *testing.T) {
	crd := "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: olds.example.com}\nspec: {group: example.com, names: {kind: Old, plural: olds}, scope: Namespaced, version: v1}\n"
	var texts []string
	for range 2 {
		c := load(t, "community-operators-prod-v4.16", "coherence-operator")
		addObject(t, lastBundle(c), crd)
		var found []string
		for _, d := range check(t, Input{Catalog: c}, ruleOFCRD) {
			if strings.Contains(d.Message, "preserveUnknownFields") {
				found = append(found, d.Message)
			}
		}
		if len(found) != 1 || !strings.Contains(found[0], "Value true:") {
			t.Fatalf("want one finding naming preserveUnknownFields' value: %q", found)
		}
		texts = append(texts, found[0])
	}
	if texts[0] != texts[1] {
		t.Fatalf("two runs said:\n%s\n%s", texts[0], texts[1])
	}
}
