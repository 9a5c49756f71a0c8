package policy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// load reads the named packages (their top-level directories) of a shared catalog, property values kept.
func load(t *testing.T, name string, pkgs ...string) *catalog.Catalog {
	t.Helper()
	res, err := catalog.LoadDir(context.Background(), shareddata.Dir(t, "catalogs", name), catalog.LoadOptions{
		Include: func(p string) bool {
			top, _, _ := strings.Cut(p, "/")
			return slices.Contains(pkgs, top)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Catalog.Packages) != len(pkgs) {
		t.Fatalf("%s: loaded %d packages, want %v", name, len(res.Catalog.Packages), pkgs)
	}
	return res.Catalog
}

// check runs one rule (at error) on c and returns its diagnostics.
func check(t *testing.T, in Input, rule string) []diag.Diagnostic {
	t.Helper()
	res, err := Run(context.Background(), in, Severities{rule: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Diagnostics {
		if d.Rule != rule || d.Check != Check || d.File == "" || d.Line == 0 || d.Package == "" || d.Hint == "" {
			t.Errorf("diagnostic of another rule or without file:line, package or hint: %+v", d)
		}
	}
	return res.Diagnostics
}

func bundles(ds []diag.Diagnostic) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Bundle)
	}
	return out
}

func wantNone(t *testing.T, ds []diag.Diagnostic) {
	t.Helper()
	for _, d := range ds {
		t.Errorf("unexpected: %s", d)
	}
}

func channel(t *testing.T, c *catalog.Catalog, name string) *catalog.Channel {
	t.Helper()
	for _, ch := range c.Channels {
		if ch.Name == name {
			return ch
		}
	}
	t.Fatalf("no channel %q", name)
	return nil
}

func entry(t *testing.T, ch *catalog.Channel, name string) *catalog.ChannelEntry {
	t.Helper()
	for i := range ch.Entries {
		if ch.Entries[i].Name == name {
			return &ch.Entries[i]
		}
	}
	t.Fatalf("channel %q has no entry %q", ch.Name, name)
	return nil
}

// opmAccepts fails the test when validate (opm validate's rules) rejects c: the attack must get past it.
func opmAccepts(t *testing.T, c *catalog.Catalog) {
	t.Helper()
	for _, d := range validate.Catalog(c) {
		if d.Severity == diag.Error {
			t.Fatalf("opm's rules already reject the mutated catalog: %s", d)
		}
	}
}

// The attack: two bundles that skip each other and that nothing on the graph reaches. opm accepts the
// channel (one head; each is skipped, so neither is stranded); clusters running them never upgrade.
func TestDanglingBundle(t *testing.T) {
	c := load(t, "composed-279", "hawtio-operator")
	wantNone(t, check(t, Input{Catalog: c}, ruleDangling))

	alpha := channel(t, c, "alpha")
	v1, v2, v3 := entry(t, alpha, "hawtio-operator.v0.1.0"), entry(t, alpha, "hawtio-operator.v0.2.0"), entry(t, alpha, "hawtio-operator.v0.3.0")
	v3.Replaces = ""
	v2.Replaces, v2.Skips = "", []string{v1.Name}
	v1.Skips = []string{v2.Name}
	opmAccepts(t, c)
	ds := check(t, Input{Catalog: c}, ruleDangling)
	if got := bundles(ds); !slices.Equal(got, []string{v1.Name, v2.Name}) {
		t.Fatalf("dangling bundles %v, want v0.1.0 and v0.2.0:\n%v", got, ds)
	}
	if ds[0].Channel != "alpha" || ds[0].Line != v1.Pos.Line || !strings.Contains(ds[0].Message, "never upgrades") {
		t.Errorf("diagnostic not on the entry: %s", ds[0])
	}
	// the same bundles reached through another channel are not dangling
	other := channel(t, c, "latest")
	other.Entries = append(other.Entries, catalog.ChannelEntry{Name: v1.Name}, catalog.ChannelEntry{Name: v2.Name, Replaces: v1.Name})
	entry(t, other, "hawtio-operator.v1.0.0").Replaces = v2.Name
	if ds := check(t, Input{Catalog: c}, ruleDangling); len(ds) != 0 {
		t.Errorf("bundles reached in channel latest reported dangling: %v", ds)
	}
}

// debezium-operator 2.6.0-final's skipRange ">2.5.3-final" covers 2.6.1-final, which replaces it: each
// upgrades to the other (real data). The mutated hawtio channel below is opm-valid.
func TestGraphLoop(t *testing.T) {
	wantNone(t, check(t, Input{Catalog: load(t, "composed-279", "hawtio-operator")}, ruleLoop))

	ds := check(t, Input{Catalog: load(t, "composed-279", "debezium-operator")}, ruleLoop)
	if len(ds) == 0 || !strings.Contains(ds[0].Message, "upgrade loop") || !strings.Contains(ds[0].Message, "covers with skipRange") {
		t.Fatalf("debezium-operator's skipRange loop not found: %v", ds)
	}

	c := load(t, "composed-279", "hawtio-operator")
	alpha := channel(t, c, "alpha")
	entry(t, alpha, "hawtio-operator.v0.2.0").Skips = []string{"hawtio-operator.v0.3.0"} // v0.3.0 replaces v0.2.0
	entry(t, alpha, "hawtio-operator.v0.3.0").Replaces = ""
	entry(t, alpha, "hawtio-operator.v0.3.0").Skips = []string{"hawtio-operator.v0.2.0"}
	entry(t, alpha, "hawtio-operator.v0.4.0").Replaces = "hawtio-operator.v0.1.0"
	entry(t, alpha, "hawtio-operator.v0.2.0").Replaces = ""
	opmAccepts(t, c)
	ds = check(t, Input{Catalog: c}, ruleLoop)
	if len(ds) != 1 || ds[0].Bundle != "hawtio-operator.v0.2.0" || !strings.Contains(ds[0].Message, "2 bundles") {
		t.Fatalf("skips loop: %v", ds)
	}
}

// hive-operator in the v4.20 catalog replaces bundles the catalog does not hold (real data).
func TestReplacesMissing(t *testing.T) {
	wantNone(t, check(t, Input{Catalog: load(t, "composed-279", "hawtio-operator")}, ruleReplacesMissing))

	ds := check(t, Input{Catalog: load(t, "community-operators-prod-v4.20", "hive-operator"), Name: "v4.20"}, ruleReplacesMissing)
	if len(ds) == 0 || !strings.Contains(ds[0].Message, "in catalog v4.20") || !strings.Contains(ds[0].Message, "is not a bundle of package \"hive-operator\"") {
		t.Fatalf("hive-operator: %v", ds)
	}
}

// customized-user-remediation 0.1.0 has skipRange ">=0.0.1", which has no upper bound (real data);
// hawtio-operator's ranges all end at or below their bundle.
func TestSkipRangeAboveVersion(t *testing.T) {
	wantNone(t, check(t, Input{Catalog: load(t, "composed-279", "hawtio-operator")}, ruleSkipRangeAbove))

	ds := check(t, Input{Catalog: load(t, "composed-279", "customized-user-remediation")}, ruleSkipRangeAbove)
	if len(ds) != 1 || ds[0].Bundle != "customized-user-remediation.v0.1.0" || !strings.Contains(ds[0].Message, `">=0.0.1"`) {
		t.Fatalf("customized-user-remediation: %v", ds)
	}
	// ending the range at the bundle's own version is fine; one patch above is not
	c := load(t, "composed-279", "hawtio-operator")
	e := entry(t, channel(t, c, "stable-v1"), "hawtio-operator.v1.1.0")
	e.SkipRange = ">=1.0.0 <1.1.0"
	wantNone(t, check(t, Input{Catalog: c}, ruleSkipRangeAbove))
	e.SkipRange = ">=1.0.0 <1.1.1"
	opmAccepts(t, c)
	if ds := check(t, Input{Catalog: c}, ruleSkipRangeAbove); len(ds) != 1 || !strings.Contains(ds[0].Message, "covers 1.1.0") {
		t.Fatalf("<1.1.1 on 1.1.0: %v", ds)
	}
}

// dell-csm-operator 1.8.0 in the v4.16 catalog is skipped by 1.8.1 and replaced by 1.9.0 (real data).
func TestSkippedInReplacesChain(t *testing.T) {
	wantNone(t, check(t, Input{Catalog: load(t, "composed-279", "hawtio-operator")}, ruleSkippedInChain))

	ds := check(t, Input{Catalog: load(t, "community-operators-prod-v4.16", "dell-csm-operator")}, ruleSkippedInChain)
	if !slices.Contains(bundles(ds), "dell-csm-operator.v1.8.0") {
		t.Fatalf("dell-csm-operator: %v", ds)
	}
}

// opendatahub-operator 2.10.0 in the v4.20 catalog has a skipRange and no replaces (real data).
func TestSkipRangeWithoutReplaces(t *testing.T) {
	wantNone(t, check(t, Input{Catalog: load(t, "composed-279", "hawtio-operator")}, ruleSkipRangeNoReplac))

	ds := check(t, Input{Catalog: load(t, "community-operators-prod-v4.20", "opendatahub-operator")}, ruleSkipRangeNoReplac)
	if !slices.Contains(bundles(ds), "opendatahub-operator.v2.10.0") {
		t.Fatalf("opendatahub-operator: %v", ds)
	}
}

// Severities come from the configuration: a rule at warning reports warnings, a rule absent does not run,
// and Packages limits the findings to the packages a change touched.
func TestSeveritiesAndPackages(t *testing.T) {
	c := load(t, "composed-279", "customized-user-remediation", "debezium-operator")
	res, err := Run(context.Background(), Input{Catalog: c}, Severities{ruleSkipRangeAbove: diag.Warning})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) < 2 || diag.HasErrors(res.Diagnostics) {
		t.Fatalf("want warnings only from both packages: %v", res.Diagnostics)
	}
	res, _ = Run(context.Background(), Input{Catalog: c, Packages: map[string]bool{"debezium-operator": true}}, Severities{ruleSkipRangeAbove: diag.Error})
	for _, d := range res.Diagnostics {
		if d.Package != "debezium-operator" || d.Severity != diag.Error {
			t.Errorf("outside Packages or not an error: %s", d)
		}
	}
	if res.Packages != 1 {
		t.Errorf("checked %d packages, want 1", res.Packages)
	}
	res, _ = Run(context.Background(), Input{Catalog: c}, Severities{})
	if len(res.Diagnostics) != 0 {
		t.Errorf("no rule enabled, yet: %v", res.Diagnostics)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, Input{Catalog: c}, Severities{ruleSkipRangeAbove: diag.Error}); err == nil {
		t.Error("a cancelled run returned no error")
	}
}

func ExampleRun() {
	c := &catalog.Catalog{
		Packages: []*catalog.Package{{Name: "foo", DefaultChannel: "stable"}},
		Channels: []*catalog.Channel{{Name: "stable", Package: "foo", Pos: catalog.Pos{File: "foo/catalog.json", Line: 2},
			Entries: []catalog.ChannelEntry{{Name: "foo.v0.1.0", SkipRange: "<0.1.0"}}}},
	}
	res, _ := Run(context.Background(), Input{Catalog: c}, Severities{ruleSkipRangeNoReplac: diag.Warning})
	for _, d := range res.Diagnostics {
		fmt.Println(d)
	}
	// Output: foo/catalog.json:2: warning: bundle "foo.v0.1.0" has skipRange "<0.1.0" but no replaces: the upgrade graph is pruned to direct jumps into it [policy-skiprange-without-replaces]
}

// hostileChannel is one package whose channel has n entries, each with skipRange rng.
func hostileChannel(n int, rng string) *catalog.Catalog {
	c := &catalog.Catalog{Packages: []*catalog.Package{{Name: "foo", DefaultChannel: "stable"}}}
	ch := &catalog.Channel{Name: "stable", Package: "foo", Pos: catalog.Pos{File: "foo/catalog.json", Line: 2}}
	for i := range n {
		v := fmt.Sprintf("1.0.%d", i)
		e := catalog.ChannelEntry{Name: "foo.v" + v, SkipRange: rng}
		if i > 0 {
			e.Replaces = fmt.Sprintf("foo.v1.0.%d", i-1)
		}
		ch.Entries = append(ch.Entries, e)
		c.Bundles = append(c.Bundles, &catalog.Bundle{Name: e.Name, Package: "foo",
			Parsed: &catalog.Parsed{Packages: []catalog.PackageProperty{{PackageName: "foo", Version: v}}}})
	}
	c.Channels = []*catalog.Channel{ch}
	return c
}

// Hostile channels of 20,000 entries. When every skipRange covers every entry (400 million edges) the
// channel is refused once its graph passes maxEdges, in bounded memory; when they cover nothing (400
// million range tests, no edge) it is refused once past maxRangeChecks, in bounded time (it used to run
// until the deadline).
func TestHostileChannelIsBounded(t *testing.T) {
	sev := Severities{ruleLoop: diag.Error, ruleDangling: diag.Error}
	// The refusal comes from the work bounds, not from a deadline: a run that reached this one (minutes,
	// where the bounds take seconds on a loaded 2-core machine) would fail with the context's error.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Input{Catalog: hostileChannel(20000, ">=0.0.0")}, sev)
	if err != nil || len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, "too large to check") ||
		res.Diagnostics[0].Severity != diag.Error {
		t.Fatalf("covering skipRanges: err %v: %v", err, res)
	}

	// skipRanges that cover nothing add no edge, but cost entries x entries comparisons (400 million):
	// refused once past maxRangeChecks, without waiting for the deadline
	res, err = Run(ctx, Input{Catalog: hostileChannel(20000, "<0.0.0")}, sev)
	if err != nil || len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, "too large to check") {
		t.Fatalf("skipRanges covering nothing: err %v: %v", err, res)
	}
	// a channel under both bounds is checked whole (2,000 entries: 4 million comparisons)
	if res, err := Run(context.Background(), Input{Catalog: hostileChannel(2000, "<0.0.0")}, sev); err != nil ||
		slices.ContainsFunc(res.Diagnostics, func(d diag.Diagnostic) bool { return strings.Contains(d.Message, "too large") }) {
		t.Fatalf("2,000 entries: %v %v", err, res)
	}
}

// A channel too large to check is reported under its own id, at error, whatever severity the other graph
// rules have: switching policy-graph-loop off (or to a warning) must not let a hostile channel through
// every graph rule unjudged.
func TestGraphTooLargeIsItsOwnRule(t *testing.T) {
	for name, sev := range map[string]Severities{
		"loop off":                   {ruleDangling: diag.Warning},
		"too-large set to a warning": {ruleLoop: diag.Warning, ruleTooLarge: diag.Warning},
	} {
		res, err := Run(context.Background(), Input{Catalog: hostileChannel(3000, "<0.0.0")}, sev)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var found bool
		for _, d := range res.Diagnostics {
			if strings.Contains(d.Message, "too large to check") {
				found = true
				if d.Rule != ruleTooLarge || d.Severity != diag.Error || d.Channel == "" {
					t.Errorf("%s: %+v, want rule %s at error naming the channel", name, d, ruleTooLarge)
				}
			}
		}
		if !found {
			t.Errorf("%s: no too-large finding in %v", name, res.Diagnostics)
		}
	}
	// the configuration knows the id: setting policy-graph-loop off in .catalogbot.yaml leaves it on
	sev := SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity}, Rules: map[string]string{ruleLoop: config.PolicyOff}})
	if sev[ruleLoop] != "" || sev[ruleTooLarge] != diag.Error {
		t.Fatalf("community with policy-graph-loop off: %v", sev)
	}
}
