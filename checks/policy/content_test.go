package policy

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/validate"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

// Every rule the configuration knows is implemented here, and nothing else: a rule id a repository turns
// on always runs.
func TestEveryConfiguredRuleIsImplemented(t *testing.T) {
	var configured []string
	for _, r := range config.PolicyRules {
		configured = append(configured, r.ID)
		if !rules[r.ID] {
			t.Errorf("config.PolicyRules lists %q, which checks/policy does not implement", r.ID)
		}
	}
	for id := range rules {
		if !slices.Contains(configured, id) {
			t.Errorf("checks/policy implements %q, which config.PolicyRules does not list", id)
		}
	}
}

// addObject appends an olm.bundle.object property holding manifest (YAML) to b.
func addObject(t *testing.T, b *catalog.Bundle, manifest string) {
	t.Helper()
	js, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := json.Marshal(catalog.BundleObject{Data: js})
	b.Properties = append(b.Properties, catalog.Property{Type: catalog.PropertyBundleObject, Value: v})
}

// editCSV rewrites the ClusterServiceVersion object of b with edit.
func editCSV(t *testing.T, b *catalog.Bundle, edit func(csv map[string]any)) {
	t.Helper()
	editObject(t, b, "ClusterServiceVersion", edit)
}

func lastBundle(c *catalog.Catalog) *catalog.Bundle { return c.Bundles[len(c.Bundles)-1] }

// coherence-operator's CSVs have every field operator-pipelines requires, as CSV objects (v4.16) and as
// olm.csv.metadata (v4.20); koku-metrics-operator's have no links (real data).
func TestCSVRequiredFields(t *testing.T) {
	for _, cat := range []string{"community-operators-prod-v4.16", "community-operators-prod-v4.20"} {
		wantNone(t, check(t, Input{Catalog: load(t, cat, "coherence-operator")}, ruleCSVRequiredFields))
	}
	ds := check(t, Input{Catalog: load(t, "community-operators-prod-v4.16", "koku-metrics-operator")}, ruleCSVRequiredFields)
	if len(ds) == 0 || !strings.Contains(ds[0].Message, "at least one link") {
		t.Fatalf("koku-metrics-operator: %v", ds)
	}
	// ack-applicationautoscaling-controller's displayName has 64 characters: operator-pipelines' pattern
	// has no upper bound, and upstream merged it
	wantNone(t, check(t, Input{Catalog: load(t, "composed-279", "ack-applicationautoscaling-controller")}, ruleCSVRequiredFields))
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	b := lastBundle(c)
	editCSV(t, b, func(csv map[string]any) {
		spec := csv["spec"].(map[string]any)
		spec["displayName"] = strings.Repeat("Coherence ", 7)
		spec["description"] = "  Coherence, a grid " // 20 characters with the white space, as Python's len counts
	})
	wantNone(t, check(t, Input{Catalog: c}, ruleCSVRequiredFields))
	editCSV(t, b, func(csv map[string]any) {
		spec := csv["spec"].(map[string]any)
		spec["description"] = "  Coherence, a grid"
		spec["maintainers"] = []any{map[string]any{"name": "Oracle"}}
		spec["links"] = []any{map[string]any{"url": "https://example.com"}}
	})
	ds = check(t, Input{Catalog: c}, ruleCSVRequiredFields)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "description must be") || !strings.Contains(ds[0].Message, "maintainer with a name and an email") ||
		!strings.Contains(ds[0].Message, "link with a name and a url") || strings.Contains(ds[0].Message, "displayName") {
		t.Fatalf("19 characters, a maintainer without email, a link without name: %v", ds)
	}
	c = load(t, "community-operators-prod-v4.16", "coherence-operator")
	b = lastBundle(c)
	editCSV(t, b, func(csv map[string]any) {
		spec := csv["spec"].(map[string]any)
		spec["displayName"] = "Co\nherence"
		delete(spec, "icon")
		spec["provider"] = map[string]any{"name": "x"}
	})
	ds = check(t, Input{Catalog: c}, ruleCSVRequiredFields)
	if len(ds) != 1 || ds[0].Bundle != b.Name || !strings.Contains(ds[0].Message, `displayName "Co\nherence"`) ||
		!strings.Contains(ds[0].Message, "icon must be") || !strings.Contains(ds[0].Message, `provider.name "x"`) {
		t.Fatalf("edited CSV: %v", ds)
	}
}

// A NetworkPolicy smuggled into a real bundle's objects: OLM cannot install it.
func TestNetworkPolicy(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	wantNone(t, check(t, Input{Catalog: c}, ruleNetworkPolicy))
	b := lastBundle(c)
	addObject(t, b, "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: allow-all}\nspec: {podSelector: {}}\n")
	ds := check(t, Input{Catalog: c}, ruleNetworkPolicy)
	if len(ds) != 1 || ds[0].Bundle != b.Name || ds[0].Line != b.Pos.Line {
		t.Fatalf("NetworkPolicy: %v", ds)
	}
}

// The v4.16 catalog still holds olm.bundle.object: under migrate level bundle-object-to-csv-metadata that
// is an error; the v4.20 catalog is migrated.
func TestCSVMetadataRequired(t *testing.T) {
	in := Input{Catalog: load(t, "community-operators-prod-v4.20", "coherence-operator"), MigrateLevel: migrateToCSVMetadata, Name: "v4.20"}
	wantNone(t, check(t, in, ruleCSVMetadataRequired))
	in = Input{Catalog: load(t, "community-operators-prod-v4.16", "coherence-operator"), MigrateLevel: migrateToCSVMetadata, Name: "v4.16"}
	ds := check(t, in, ruleCSVMetadataRequired)
	if len(ds) != len(in.Catalog.Bundles) || !strings.Contains(ds[0].Message, "in catalog v4.16") {
		t.Fatalf("want one finding per bundle (%d): %v", len(in.Catalog.Bundles), ds)
	}
	in.MigrateLevel = ""
	wantNone(t, check(t, in, ruleCSVMetadataRequired))
}

// OLM v1 readiness on real bundles: coherence-operator installs (AllNamespaces, no webhooks or
// dependencies); kube-green has a webhook, koku-metrics-operator is OwnNamespace only, shipwright-operator
// requires APIs; the operator-conditions and bundle-format cases edit a coherence-operator bundle.
func TestOLMv1Readiness(t *testing.T) {
	all := Severities{}
	for _, id := range olmv1Rules {
		all[id] = diag.Warning
	}
	clean := load(t, "community-operators-prod-v4.16", "coherence-operator")
	for _, id := range olmv1Rules {
		wantNone(t, check(t, Input{Catalog: clean}, id))
	}
	res, _ := Run(t.Context(), Input{Catalog: clean}, all)
	if res.OLMv1Checked != len(clean.Bundles) || res.OLMv1Installable != res.OLMv1Checked {
		t.Errorf("coherence-operator: %d of %d installable, want all %d", res.OLMv1Installable, res.OLMv1Checked, len(clean.Bundles))
	}
	for _, c := range []struct{ cat, pkg, rule, want string }{
		{"community-operators-prod-v4.16", "kube-green", ruleV1Webhooks, "defines 1 webhooks"},
		{"community-operators-prod-v4.16", "koku-metrics-operator", ruleV1AllNS, "AllNamespaces"},
		{"community-operators-prod-v4.20", "koku-metrics-operator", ruleV1AllNS, "AllNamespaces"}, // from olm.csv.metadata
		{"community-operators-prod-v4.16", "shipwright-operator", ruleV1Deps, "olm.gvk.required"},
	} {
		ds := check(t, Input{Catalog: load(t, c.cat, c.pkg)}, c.rule)
		if len(ds) == 0 || !strings.Contains(ds[0].Message, c.want) || !strings.HasPrefix(ds[0].Message, "OLM v1 cannot install bundle") {
			t.Errorf("%s %s: %s: %v", c.cat, c.pkg, c.rule, ds)
		}
	}

	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	b := lastBundle(c)
	editCSV(t, b, func(csv map[string]any) {
		install := csv["spec"].(map[string]any)["install"].(map[string]any)["spec"].(map[string]any)
		perms, _ := install["clusterPermissions"].([]any)
		install["clusterPermissions"] = append(perms, map[string]any{"serviceAccountName": "x",
			"rules": []any{map[string]any{"apiGroups": []any{"operators.coreos.com"}, "resources": []any{"operatorconditions"}, "verbs": []any{"get"}}}})
	})
	mt, _ := json.Marshal("plain+v0")
	b.Properties = append(b.Properties, catalog.Property{Type: "olm.bundle.mediatype", Value: mt})
	res, _ = Run(t.Context(), Input{Catalog: c}, all)
	var got []string
	for _, d := range res.Diagnostics {
		if d.Bundle == b.Name {
			got = append(got, d.Rule)
		}
	}
	if !slices.Equal(got, []string{ruleV1Format, ruleV1Conditions}) && !slices.Equal(got, []string{ruleV1Conditions, ruleV1Format}) {
		t.Errorf("edited bundle: rules %v, want bundle-format and operator-conditions: %v", got, res.Diagnostics)
	}
	if res.OLMv1Installable != res.OLMv1Checked-1 {
		t.Errorf("%d of %d installable, want one fewer", res.OLMv1Installable, res.OLMv1Checked)
	}
}

// A CRD still at apiextensions.k8s.io/v1beta1 (removed in Kubernetes 1.22) added to a real bundle: the
// v4.16 catalog (Kubernetes 1.29) cannot serve it, a catalog for Kubernetes 1.21 can, and the table has no
// last OpenShift version (a v4.30 catalog, 1.43, is judged too). Without a Kubernetes version the rule has
// nothing to judge against: a note says it did not run.
func TestRemovedAPI(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	wantNone(t, check(t, Input{Catalog: c, Kubernetes: "1.29"}, ruleRemovedAPI))
	b := lastBundle(c)
	addObject(t, b, "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: olds.example.com}\nspec: {group: example.com, names: {kind: Old, plural: olds}, scope: Namespaced, version: v1}\n")
	ds := check(t, Input{Catalog: c, Kubernetes: "1.29", Name: "v4.16"}, ruleRemovedAPI)
	if len(ds) != 1 || ds[0].Bundle != b.Name || !strings.Contains(ds[0].Message, `apiextensions.k8s.io/v1beta1 CustomResourceDefinition "olds.example.com"`) ||
		!strings.Contains(ds[0].Message, "Kubernetes 1.22 removed") {
		t.Fatalf("v1beta1 CRD at 1.29: %v", ds)
	}
	wantNone(t, check(t, Input{Catalog: c, Kubernetes: "1.21"}, ruleRemovedAPI))
	if ds := check(t, Input{Catalog: c, Kubernetes: "1.43"}, ruleRemovedAPI); len(ds) != 1 {
		t.Errorf("Kubernetes 1.43: %v", ds)
	}
	// without a Kubernetes version the rule does not run, and the report says so in a note (no finding)
	res, err := Run(t.Context(), Input{Catalog: c}, Severities{ruleRemovedAPI: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Diagnostics) != 1 || res.Diagnostics[0].Severity != diag.Note || !strings.Contains(res.Diagnostics[0].Message, "did not run") {
		t.Fatalf("no Kubernetes version: %v", res.Diagnostics)
	}
}

// A manifest is refused over etcd's 1.5 MiB request limit, not at 1 MiB: upstream merged a 1.1 MiB CRD.
// Seven ConfigMaps of 0.9 MiB of random text are each fine, but gzipped and base64-encoded together over
// the 1 MiB ConfigMap OLM stages a bundle in: this rule's finding only while policy-of-bundle, which
// measures the same, does not run (one problem, one finding). The real bundle is far under both.
func TestBundleSize(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	wantNone(t, check(t, Input{Catalog: c}, ruleSize))
	configMap := func(name string, n int, seed uint64) string {
		rng := rand.New(rand.NewPCG(seed, seed))
		buf := make([]byte, n*3/4)
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s}\ndata: {blob: %s}\n", name, base64.StdEncoding.EncodeToString(buf))
	}
	b := lastBundle(c)
	editObject(t, b, "CustomResourceDefinition", func(crd map[string]any) {
		crd["metadata"].(map[string]any)["annotations"] = map[string]any{"padding": strings.Repeat("x", 11<<20/10)}
	})
	wantNone(t, check(t, Input{Catalog: c}, ruleSize))
	addObject(t, b, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {blob: %s}\n", strings.Repeat("x", 16<<20/10)))
	ds := check(t, Input{Catalog: c}, ruleSize)
	if len(ds) != 1 || ds[0].Bundle != b.Name || !strings.Contains(ds[0].Message, `ConfigMap "big"`) {
		t.Fatalf("1.6 MiB manifest: %v", ds)
	}

	c = load(t, "community-operators-prod-v4.16", "coherence-operator")
	b = lastBundle(c)
	for i := range 7 {
		addObject(t, b, configMap(fmt.Sprintf("part%d", i), 9<<20/10, uint64(i+2)))
	}
	ds = check(t, Input{Catalog: c}, ruleSize)
	if len(ds) != 1 || !strings.Contains(ds[0].Message, "gzipped and base64-encoded") {
		t.Fatalf("7 x 0.9 MiB of random text: %v", ds)
	}
	res, err := Run(t.Context(), Input{Catalog: c}, Severities{ruleSize: diag.Error, ruleOFBundle: diag.Error})
	if err != nil {
		t.Fatal(err)
	}
	var size, of []string
	for _, d := range res.Diagnostics {
		if d.Bundle != b.Name || d.Severity != diag.Error {
			continue
		}
		switch {
		case d.Rule == ruleSize:
			size = append(size, d.Message)
		case strings.Contains(d.Message, "maximum bundle compressed size"):
			of = append(of, d.Message)
		}
	}
	if len(size) != 0 || len(of) != 1 {
		t.Fatalf("with policy-of-bundle on, its finding only: size %q, validator %q", size, of)
	}
}

// rules are the implemented rule ids, by what they walk.
var rules = func() map[string]bool {
	m := map[string]bool{}
	for _, ids := range [][]string{graphRules, dependencyRules, contentRules, olmv1Rules, {ruleRemovedAPI}, changeRules, {ruleCISchema, ruleReleaseConfig, ruleVersionDirectory, ruleUsingFBC}, ofRules, nameRules} {
		for _, id := range ids {
			m[id] = true
		}
	}
	return m
}()

// The content the rules judge is the same whether the policy decodes a bundle's objects itself (a
// catalog loaded with its property values) or reads them as validate's lean load decoded them (the
// Collector, which the CLI, the Action and the App use): every preset's rule, operator-framework's
// validators included, finds the same on real bundles with objects of every kind the rules read added (a
// CSV rewritten in YAML, a NetworkPolicy, a removed API, a manifest over etcd's limit), so a loader that
// handed the objects on out of order, or reused their memory under a kept manifest, fails here.
func TestCollectedContentIsDecodedContent(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator", "koku-metrics-operator")
	b := lastBundle(c)
	addObject(t, b, "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata: {name: allow-all}\nspec: {podSelector: {}}\n")
	addObject(t, b, "apiVersion: apiextensions.k8s.io/v1beta1\nkind: CustomResourceDefinition\nmetadata: {name: olds.example.com}\nspec: {group: example.com, names: {kind: Old, plural: olds}, scope: Namespaced, version: v1}\n")
	addObject(t, b, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {blob: %s}\n", strings.Repeat("x", 16<<20/10)))
	// the first bundle's CSV as YAML, as a bundle built by hand may hold it
	first := c.Bundles[0]
	for i, p := range first.Properties {
		var bo catalog.BundleObject
		if p.Type != catalog.PropertyBundleObject || json.Unmarshal(p.Value, &bo) != nil || !strings.Contains(string(bo.Data), `"ClusterServiceVersion"`) {
			continue
		}
		y, err := yaml.JSONToYAML(bo.Data)
		if err != nil {
			t.Fatal(err)
		}
		first.Properties[i].Value, _ = json.Marshal(catalog.BundleObject{Data: y})
	}
	dir := t.TempDir() + "/catalog"
	if err := catalog.WriteDir(dir, c, catalog.FormatJSON); err != nil {
		t.Fatal(err)
	}
	sev := SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity, config.PresetOLMv1}})
	sev[ruleRemovedAPI] = diag.Error
	in := Input{Kubernetes: "1.29", Name: "v4.16"}

	full, err := catalog.LoadDir(t.Context(), dir, catalog.LoadOptions{})
	if err != nil || len(full.Diagnostics) > 0 {
		t.Fatalf("load: %v %v", err, full.Diagnostics)
	}
	in.Catalog = full.Catalog
	decoded, err := Run(t.Context(), in, sev)
	if err != nil {
		t.Fatal(err)
	}

	lean, col := collect(t, dir, sev)
	in.Catalog, in.Collected, in.Reread = lean, col, rereadDir(dir)
	collected, err := Run(t.Context(), in, sev)
	if err != nil {
		t.Fatal(err)
	}

	text := func(ds []diag.Diagnostic) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.String())
		}
		return out
	}
	if !slices.Equal(text(collected.Diagnostics), text(decoded.Diagnostics)) {
		t.Fatalf("collected during the load:\n%s\ndecoded by the policy:\n%s", strings.Join(text(collected.Diagnostics), "\n"), strings.Join(text(decoded.Diagnostics), "\n"))
	}
	for _, want := range []string{ruleNetworkPolicy, ruleSize, ruleOFCRD, ruleOFOperatorHub} {
		if !slices.ContainsFunc(collected.Diagnostics, func(d diag.Diagnostic) bool { return d.Rule == want }) {
			t.Errorf("no finding of %s: the test's objects were not judged (%s)", want, strings.Join(text(collected.Diagnostics), "\n"))
		}
	}
}

// An icon's data is base64 once its white space is removed, as operator-pipelines reads it; anything
// else, invalid UTF-8 included, is not an icon.
func TestIconData(t *testing.T) {
	png := "image/png"
	for data, want := range map[string]bool{
		"aGVsbG8=":                  true,
		"aGVs\nbG8=\n":              true,
		" aG\tVs\r\nbG8=\v\f":       true,
		"aGV":                       false,
		"  aG V ":                   false,
		"aGVsbG8":                   false,
		"aGVs\xffbG8=":              false,
		"\xff\xff":                  false,
		"aGVs bG8= aGVs":            false,
		"aGVsbG8=\u00a0":            false, // no-break space is not white space here: not base64
		strings.Repeat("QUJD", 1e4): true,
	} {
		c := &csvFields{}
		c.Icon = append(c.Icon, struct {
			Data      *string `json:"base64data"`
			MediaType *string `json:"mediatype"`
		}{&data, &png})
		if got := validIcons(c); got != want {
			t.Errorf("icon data %q: valid %v, want %v", data, got, want)
		}
	}
	for s, want := range map[string]string{"": "", "abc": "abc", " a\tb\nc\rd\ve\ff ": "abcdef", "\x08\x0e": "\x08\x0e"} {
		if got := withoutSpace(s); got != want {
			t.Errorf("withoutSpace(%q) = %q, want %q", s, got, want)
		}
	}
}

// collect validates the catalog in dir as the pipeline does, its bundles' values collected for the rules sev
// enables; the catalog must be valid.
func collect(t *testing.T, dir string, sev Severities) (*catalog.Catalog, *Collector) {
	t.Helper()
	col := NewCollector(sev)
	lean, err := validate.Dir(t.Context(), dir, validate.Options{VisitBundle: col.Visit})
	if err != nil || !lean.Valid() {
		t.Fatalf("validate: %v %v", err, lean.Diagnostics)
	}
	return lean.Catalog, col
}

// rereadDir reads files of the catalog in dir again, with their values (Input.Reread), as the pipeline does.
func rereadDir(dir string) Reread {
	return func(ctx context.Context, files []string) (*catalog.Catalog, error) {
		res, err := catalog.LoadDir(ctx, dir, catalog.LoadOptions{Include: func(p string) bool { return slices.Contains(files, p) }})
		if err != nil {
			return nil, err
		}
		return res.Catalog, nil
	}
}

// A Collector keeps only the digest of a bundle's manifests: operator-framework's validators read the
// bundle's file again on a cache miss, once per file, and not at all when the cache has every bundle. A
// file that changed between the load and that read (an object swapped in after validation) is not
// judged as if it were the file validated: the run fails, naming the bundle, with or without
// policy-of-bundle on. Without a way to read the files again, the run refuses rather than skipping the
// validators.
func TestCollectedBundlesAreReadAgainOnlyOnAMiss(t *testing.T) {
	c := load(t, "community-operators-prod-v4.16", "coherence-operator")
	dir := t.TempDir() + "/catalog"
	if err := catalog.WriteDir(dir, c, catalog.FormatJSON); err != nil {
		t.Fatal(err)
	}
	sev := SeveritiesOf(config.PolicyConfig{Presets: []string{config.PresetCommunity}})
	cache := NewOFCache(t.TempDir())
	run := func(reread Reread) *Result {
		t.Helper()
		lean, col := collect(t, dir, sev)
		res, err := Run(t.Context(), Input{Catalog: lean, Collected: col, Reread: reread, OFCache: cache}, sev)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var reads []string
	counting := func(ctx context.Context, files []string) (*catalog.Catalog, error) {
		reads = append(reads, files...)
		return rereadDir(dir)(ctx, files)
	}
	cold := run(counting)
	if len(reads) != 1 || reads[0] != "coherence-operator/catalog.json" {
		t.Fatalf("a cold run read %q again, want the package's one file once", reads)
	}
	reads = nil
	warm := run(counting)
	if len(reads) != 0 {
		t.Fatalf("a run the cache answers read %q again", reads)
	}
	if fmt.Sprint(warm.Diagnostics) != fmt.Sprint(cold.Diagnostics) {
		t.Fatalf("warm:\n%v\ncold:\n%v", warm.Diagnostics, cold.Diagnostics)
	}

	// the last bundle's file changes after the load: a new object the validation never saw
	swapped := func(ctx context.Context, files []string) (*catalog.Catalog, error) {
		again, err := rereadDir(dir)(ctx, files)
		if err == nil {
			addObject(t, lastBundle(again), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: swapped}\n")
		}
		return again, err
	}
	// an error of the run, not a finding: a finding of policy-of-bundle would be dropped where that rule is
	// off, and the bundle would pass unjudged by the rules that are on
	last := lastBundle(c).Name
	for _, off := range []string{"", ruleOFBundle} {
		on := maps.Clone(sev)
		delete(on, off)
		lean, col := collect(t, dir, on)
		_, err := Run(t.Context(), Input{Catalog: lean, Collected: col, Reread: swapped, OFCache: NewOFCache("")}, on)
		if err == nil || !strings.Contains(err.Error(), "changed while the catalog was checked") || !strings.Contains(err.Error(), last) {
			t.Fatalf("a bundle whose file changed after the load (%q off): %v", off, err)
		}
	}

	lean, col := collect(t, dir, sev)
	if _, err := Run(t.Context(), Input{Catalog: lean, Collected: col}, sev); err == nil {
		t.Fatal("the validators ran on collected content with no way to read the bundles' objects")
	}
}
