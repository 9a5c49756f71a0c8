package policy

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// The change rules on the community layout (fbc-templates' paths): a template edit of one operator
// passes; two operators, or a new bundle directory with a catalog edit, do not.
func TestChangeRules(t *testing.T) {
	sev := Severities{ruleOneOperator: diag.Error, ruleBundleAndCatlog: diag.Error}
	dirs := []string{"catalogs/v4.16", "catalogs/v4.17"}
	const (
		nfsTemplate = "operators/nfs-provisioner-operator/catalog-templates/basic-template.yaml"
		odfTemplate = "operators/odf-node-recovery-operator/catalog-templates/basic.yaml"
		nfsBundle   = "operators/nfs-provisioner-operator/0.0.10/manifests/nfs-provisioner-operator.clusterserviceversion.yaml"
	)
	for _, c := range []struct {
		name  string
		ch    Change
		rules []string
	}{
		{"one template", Change{Packages: []string{"nfs-provisioner-operator"}, Paths: []string{nfsTemplate}}, nil},
		{"a bundle alone", Change{Packages: []string{"nfs-provisioner-operator"}, Paths: []string{nfsBundle, "operators/nfs-provisioner-operator/ci.yaml"}}, nil},
		{"two operators", Change{Packages: []string{"odf-node-recovery-operator", "nfs-provisioner-operator"}, Paths: []string{nfsTemplate, odfTemplate}},
			[]string{ruleOneOperator}},
		{"bundle and template", Change{Packages: []string{"nfs-provisioner-operator"}, Paths: []string{nfsBundle, nfsTemplate}},
			[]string{ruleBundleAndCatlog}},
		{"bundle and rendered catalog", Change{Packages: []string{"nfs-provisioner-operator"}, Paths: []string{"catalogs/v4.17/nfs-provisioner-operator/catalog.yaml", nfsBundle}},
			[]string{ruleBundleAndCatlog}},
	} {
		ch := c.ch
		ch.CatalogDirs = dirs
		ds := CheckChange(ch, sev)
		var got []string
		for _, d := range ds {
			got = append(got, d.Rule)
			if d.File == "" || d.Hint == "" || d.Check != Check {
				t.Errorf("%s: diagnostic without file or hint: %+v", c.name, d)
			}
		}
		if strings.Join(got, ",") != strings.Join(c.rules, ",") {
			t.Errorf("%s: rules %v, want %v: %v", c.name, got, c.rules, ds)
		}
	}
	// one catalog mapped from two templates of the package
	ci := "operators/nfs-provisioner-operator/ci.yaml"
	ch := Change{Packages: []string{"nfs-provisioner-operator"}, Paths: []string{ci}, Mappings: []Mapping{
		{"nfs-provisioner-operator", nfsTemplate, "v4.19", ci, 6}, {"nfs-provisioner-operator", nfsTemplate, "v4.20", ci, 7},
		{"nfs-provisioner-operator", "operators/nfs-provisioner-operator/catalog-templates/semver.yaml", "v4.20", ci, 12}}}
	ds := CheckChange(ch, Severities{ruleOneTemplate: diag.Error})
	if len(ds) != 1 || ds[0].Line != 12 || !strings.Contains(ds[0].Message, "catalog v4.20") || !strings.Contains(ds[0].Message, "basic-template.yaml (line 7) and semver.yaml") {
		t.Errorf("two templates for v4.20: %v", ds)
	}
	ch.Mappings = ch.Mappings[:2]
	if ds := CheckChange(ch, Severities{ruleOneTemplate: diag.Error}); len(ds) != 0 {
		t.Errorf("one template per catalog: %v", ds)
	}
	if !IsChangeRule(ruleCISchema) || !IsChangeRule(ruleOneOperator) || IsChangeRule(ruleLoop) {
		t.Error("IsChangeRule: ci-schema and one-operator judge changes, graph-loop a catalog")
	}
	if ds := CheckChange(Change{Packages: []string{"a", "b"}}, Severities{}); len(ds) != 0 {
		t.Errorf("rules off: %v", ds)
	}
}
