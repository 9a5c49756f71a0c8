package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

func bundle(t *testing.T, c *catalog.Catalog, name string) *catalog.Bundle {
	t.Helper()
	for _, b := range c.Bundles {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no bundle %q", name)
	return nil
}

// pelorus-operator requires prometheus 0.47.0 (the catalog has it) and grafana-operator 4.8.0 (the
// composed catalog has no grafana-operator): real data.
func TestDependencyUnsatisfied(t *testing.T) {
	c := load(t, "composed-279", "pelorus-operator", "prometheus")
	ds := check(t, Input{Catalog: c}, ruleDepUnsatisfied)
	if len(ds) == 0 {
		t.Fatal("pelorus-operator's grafana-operator dependency not reported")
	}
	for _, d := range ds {
		if !strings.Contains(d.Message, `requires package "grafana-operator" in "4.8.0"`) && !strings.Contains(d.Message, `"4.6.0"`) {
			t.Errorf("only the grafana-operator requirement is unsatisfied: %s", d)
		}
	}
	// the same requirement in a range the catalog does not serve, or that does not parse
	b := bundle(t, c, "pelorus-operator.v0.0.9")
	for i, r := range b.Parsed.PackagesRequired {
		if r.PackageName == "prometheus" {
			b.Parsed.PackagesRequired[i].VersionRange = ">=0.99.0"
		}
	}
	b.Parsed.PackagesRequired = append(b.Parsed.PackagesRequired, catalog.PackageRequired{PackageName: "prometheus", VersionRange: "not a range"})
	var msgs []string
	for _, d := range check(t, Input{Catalog: c, Packages: map[string]bool{"pelorus-operator": true}}, ruleDepUnsatisfied) {
		if d.Bundle == b.Name {
			msgs = append(msgs, d.Message)
		}
	}
	if !slices.ContainsFunc(msgs, func(m string) bool {
		return strings.Contains(m, `"prometheus" in ">=0.99.0"`) && strings.Contains(m, "0.14.0 to 0.56.3")
	}) ||
		!slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, "does not parse") }) {
		t.Errorf("unsatisfiable and unparsable ranges not reported: %q", msgs)
	}
	// an olm.gvk.required nobody provides (l5-operator 0.0.2 needs crunchydata's PostgresCluster)
	ds = check(t, Input{Catalog: load(t, "composed-279", "l5-operator")}, ruleDepUnsatisfied)
	if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return strings.Contains(d.Message, "PostgresCluster (olm.gvk.required)") }) {
		t.Errorf("l5-operator's gvk requirement: %v", ds)
	}
}

// Two packages whose heads require prometheus in disjoint ranges: each alone is satisfiable, together no
// cluster can install them. pelorus-operator's head requires 0.47.0 (real); l5-operator's head is made to
// require >=0.56.0.
func TestDependencyConflict(t *testing.T) {
	c := load(t, "composed-279", "pelorus-operator", "prometheus", "l5-operator")
	wantNone(t, check(t, Input{Catalog: c}, ruleDepConflict))

	head := bundle(t, c, "l5-operator.v0.0.3")
	head.Parsed.PackagesRequired = append(head.Parsed.PackagesRequired, catalog.PackageRequired{PackageName: "prometheus", VersionRange: ">=0.47.0"})
	wantNone(t, check(t, Input{Catalog: c}, ruleDepConflict))

	head.Parsed.PackagesRequired[len(head.Parsed.PackagesRequired)-1].VersionRange = ">=0.56.0"
	ds := check(t, Input{Catalog: c}, ruleDepConflict)
	if len(ds) != 2 || ds[0].Package == ds[1].Package || !strings.Contains(ds[0].Message, "no bundle of \"prometheus\"") {
		t.Fatalf("want the conflict reported on both packages: %v", ds)
	}
	// a change touching only l5-operator is told, on its own bundle
	ds = check(t, Input{Catalog: c, Packages: map[string]bool{"l5-operator": true}}, ruleDepConflict)
	if len(ds) != 1 || ds[0].Bundle != head.Name {
		t.Fatalf("touched package only: %v", ds)
	}
}

// A change's packages are checked alone, their dependencies looked up in the whole catalog (Universe):
// pelorus-operator's prometheus requirement is met by the universe, not by the touched subset.
func TestDependenciesLookedUpInUniverse(t *testing.T) {
	touched := load(t, "composed-279", "pelorus-operator")
	whole := load(t, "composed-279", "pelorus-operator", "prometheus")
	if !Requires(touched, nil) || Requires(whole, map[string]bool{"prometheus": true}) {
		t.Fatal("Requires: pelorus-operator declares dependencies, prometheus none")
	}
	hasPrometheus := func(ds []diag.Diagnostic) bool {
		return slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return strings.Contains(d.Message, `"prometheus"`) })
	}
	if !hasPrometheus(check(t, Input{Catalog: touched}, ruleDepUnsatisfied)) {
		t.Fatal("without the universe, the prometheus requirement is unsatisfied")
	}
	ds := check(t, Input{Catalog: touched, Universe: whole}, ruleDepUnsatisfied)
	if hasPrometheus(ds) || len(ds) == 0 {
		t.Fatalf("with the universe only grafana-operator is missing: %v", ds)
	}
}

// A hostile catalog: 3,000 packages whose heads all require one package in pairwise disjoint ranges
// (4.5 million pairs to weigh). The run stops at its deadline with the context's error.
func TestHostileDependenciesStopAtDeadline(t *testing.T) {
	c := &catalog.Catalog{}
	addPkg := func(name, version string, req *catalog.PackageRequired) {
		c.Packages = append(c.Packages, &catalog.Package{Name: name, DefaultChannel: "stable"})
		b := &catalog.Bundle{Name: name + ".v" + version, Package: name, Parsed: &catalog.Parsed{Packages: []catalog.PackageProperty{{PackageName: name, Version: version}}}}
		if req != nil {
			b.Parsed.PackagesRequired = []catalog.PackageRequired{*req}
		}
		c.Bundles = append(c.Bundles, b)
		c.Channels = append(c.Channels, &catalog.Channel{Name: "stable", Package: name, Entries: []catalog.ChannelEntry{{Name: b.Name}}})
	}
	for i := range 3000 {
		addPkg("target", fmt.Sprintf("1.%d.0", i), nil)
	}
	c.Packages = c.Packages[:1]
	c.Channels = c.Channels[:1] // one channel of target holding only its first bundle: enough for a head
	for i := range 3000 {
		addPkg(fmt.Sprintf("p%d", i), "1.0.0", &catalog.PackageRequired{PackageName: "target", VersionRange: fmt.Sprintf("=1.%d.0", i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Run(ctx, Input{Catalog: c}, Severities{ruleDepConflict: diag.Error}); err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("hostile dependencies: err %v after %s", err, time.Since(start))
	}
}
