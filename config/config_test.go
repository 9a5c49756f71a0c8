package config

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// wantRules names, per testdata file, rules that must be among its diagnostics (the goldens hold the
// full lists); files absent here must decode without errors.
var wantRules = map[string][]string{
	"unknown_field.yaml":  {"config-unknown-field"},
	"wrong_type.yaml":     {"config-wrong-type"},
	"duplicate_key.yaml":  {"config-duplicate-key"},
	"bad_login.yaml":      {"config-bad-login", "config-bad-value"},
	"bad_method.yaml":     {"config-bad-value"},
	"bad_value.yaml":      {"config-bad-value"},
	"missing_fields.yaml": {"config-missing-field"},
	"syntax_error.yaml":   {"config-syntax"},
	"merge_key.yaml":      {"config-unsupported", "config-unknown-field"},
	"two_documents.yaml":  {"config-syntax"},
	"bad_policy.yaml":     {"config-bad-value", "config-wrong-type", "config-unknown-field", "config-duplicate-entry"},
}

func TestParseConfigGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, ds, err := ParseConfig(name, data)
			want, invalid := wantRules[name]
			if invalid != (err != nil) || invalid != (cfg == nil) || invalid != diag.HasErrors(ds) {
				t.Fatalf("invalid=%v but err=%v, cfg nil=%v, diagnostics:\n%s", invalid, err, cfg == nil, render(ds, nil))
			}
			if err != nil && diag.CategoryOf(err) != diag.Usage {
				t.Errorf("error category %s, want usage: %v", diag.CategoryOf(err), err)
			}
			for _, d := range ds {
				if d.File != name || d.Line == 0 || d.Check != "config" || d.Rule == "" {
					t.Errorf("diagnostic without file:line, check or rule: %+v", d)
				}
			}
			for _, rule := range want {
				if !slices.ContainsFunc(ds, func(d diag.Diagnostic) bool { return d.Rule == rule }) {
					t.Errorf("no %s diagnostic", rule)
				}
			}
			golden(t, strings.TrimSuffix(file, ".yaml")+".golden", render(ds, cfg))
		})
	}
}

// render is a golden file's text: one diagnostic per line (with its hint), then the decoded config.
func render(ds []diag.Diagnostic, cfg *Config) []byte {
	var b bytes.Buffer
	for _, d := range ds {
		fmt.Fprintln(&b, d.String())
		if d.Hint != "" {
			fmt.Fprintf(&b, "    hint: %s\n", d.Hint)
		}
	}
	if cfg != nil {
		b.WriteString("--- decoded:\n")
		out, err := yaml.Marshal(cfg)
		if err != nil {
			panic(err)
		}
		b.Write(out)
	}
	return b.Bytes()
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n--- got:\n%s\n--- want:\n%s", path, got, want)
	}
}

func TestParseConfigReportsEveryError(t *testing.T) {
	// One error per line 3..9: none may be lost behind another.
	src := `apiVersion: catalogbot.dev/v1alpha1
kind: Config
maintainers: [-bad]
unknown: 1
merge: {method: ff}
smoke: {timeout: soon}
graph: {allowModifyReleased: maybe}
images: {requireDigest: true, requireDigest: false}
owners: {etcd: ["x y"]}
`
	_, ds, err := ParseConfig(ConfigFile, []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	var lines []int
	for _, d := range ds {
		lines = append(lines, d.Line)
	}
	if want := []int{3, 4, 5, 6, 7, 8, 9}; !slices.Equal(lines, want) {
		t.Errorf("diagnostics on lines %v, want %v:\n%s", lines, want, render(ds, nil))
	}
}

func TestDefaultsAndAccessors(t *testing.T) {
	cfg, ds, err := ParseConfig(ConfigFile, []byte("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\n"))
	if err != nil || len(ds) != 0 {
		t.Fatalf("err=%v diagnostics=%v", err, ds)
	}
	if got, want := *cfg, *Default(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v, want the defaults %+v", got, want)
	}
	if cfg.Catalog.Dir != "catalog" || cfg.Merge.Method != "squash" || !cfg.Approvals.OwnerReviewSatisfies || cfg.Smoke.TimeoutDuration() != 10*time.Minute {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	for _, tc := range []struct{ ownersFrom, pkg, path string }{
		{"", "etcd", ""},
		{"ci.yaml", "etcd", "catalog/etcd/ci.yaml"},
		{"OWNERS", "etcd", "catalog/etcd/OWNERS"},
		{"operators/{package}/ci.yaml", "etcd", "operators/etcd/ci.yaml"},
	} {
		c := Default()
		c.OwnersFrom = tc.ownersFrom
		if got := c.OwnersFilePath(tc.pkg); got != tc.path {
			t.Errorf("ownersFrom %q: OwnersFilePath(%s) = %q, want %q", tc.ownersFrom, tc.pkg, got, tc.path)
		}
		if tc.path == "" {
			continue
		}
		if pkg, ok := c.OwnersFilePackage(tc.path); !ok || pkg != tc.pkg {
			t.Errorf("ownersFrom %q: OwnersFilePackage(%s) = %q, %v", tc.ownersFrom, tc.path, pkg, ok)
		}
		for _, other := range []string{"catalog/etcd/catalog.json", "operators/a/b/ci.yaml", "catalog//ci.yaml", "ci.yaml"} {
			if pkg, ok := c.OwnersFilePackage(other); ok {
				t.Errorf("ownersFrom %q: %s taken for package %q's owners file", tc.ownersFrom, other, pkg)
			}
		}
	}
}

// bombs are hostile documents; each must be refused (not walked) in well under a second.
func TestParseConfigRejectsBombs(t *testing.T) {
	laughs := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\na: &a [x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 'b', 'a'; i <= 'j'; i, prev = i+1, i {
		laughs += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	// Breadth: many owners entries that all alias one long list; no nesting at all.
	var wide strings.Builder
	wide.WriteString("apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: &m [")
	for i := range 2000 {
		fmt.Fprintf(&wide, "u%d, ", i)
	}
	wide.WriteString("alice]\nowners:\n")
	for i := range 2000 {
		fmt.Fprintf(&wide, "  p%d: *m\n", i)
	}
	cyclic := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: &m [alice, *m]\n"
	for name, src := range map[string]string{
		"billion laughs":    laughs + "maintainers: *j\n",
		"unused laughs":     laughs,
		"wide aliases":      wide.String(),
		"too large":         "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\n#" + strings.Repeat("x", MaxFileSize),
		"cyclic alias":      cyclic,
		"deep flow nesting": strings.Repeat("[", 20000) + strings.Repeat("]", 20000),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			cfg, ds, err := ParseConfig(ConfigFile, []byte(src))
			if elapsed := time.Since(start); elapsed > time.Second {
				t.Errorf("took %v", elapsed)
			}
			if err == nil || cfg != nil {
				t.Fatalf("accepted: %v", ds)
			}
			if len(ds) != 1 {
				t.Errorf("want one diagnostic refusing the file, got:\n%s", render(ds, nil))
			}
			t.Logf("%s (%v)", ds[0], time.Since(start))
		})
	}
}

// A legitimate alias (one team list reused) is within limits and decodes.
func TestParseConfigAliasesWithinLimits(t *testing.T) {
	src := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nowners:\n  a: &t [bob, org/team]\n  b: *t\n"
	cfg, _, err := ParseConfig(ConfigFile, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Owners["b"], []string{"bob", "org/team"}) {
		t.Errorf("owners b = %v", cfg.Owners["b"])
	}
}

func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, ds, err := ParseConfig(ConfigFile, data)
		if (err == nil) != (cfg != nil) || (err != nil) != diag.HasErrors(ds) {
			t.Fatalf("inconsistent result: cfg=%v err=%v diagnostics=%v", cfg != nil, err, ds)
		}
	})
}

// Syntax errors point at the right line whichever part of yaml.v3 (scanner or parser) found them.
func TestParseConfigSyntaxErrorLines(t *testing.T) {
	for _, tc := range []struct {
		src  string
		line int
	}{
		{"apiVersion: v\nb: [x\nc: 2\n", 2},       // parser: unclosed flow sequence
		{"apiVersion: v\nb: {x: 1\n", 2},          // parser: unclosed flow mapping
		{"apiVersion: v\nkind: Config\n- x\n", 3}, // parser: block mapping
		{"b: [x\n", 2},                                  // parser, collection on the first line: where it gave up (end of file)
		{"apiVersion: v\nb: c: d\n", 2},                 // scanner
		{"apiVersion: v\nb: 2\n  c: 3\n", 3},            // scanner
		{"apiVersion: v\n\tb: 2\n", 2},                  // scanner: tab
		{"apiVersion: v\nkind: Config\nb: \"open\n", 3}, // scanner: end of stream
	} {
		_, ds, err := ParseConfig(ConfigFile, []byte(tc.src))
		if err == nil || len(ds) != 1 || ds[0].Rule != "config-syntax" || ds[0].Line != tc.line {
			t.Errorf("%q: want one config-syntax error on line %d, got %v", tc.src, tc.line, ds)
		}
	}
}

func TestParseConfigCapsDiagnostics(t *testing.T) {
	src := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers:\n" + strings.Repeat("  - -bad\n", 250)
	_, ds, err := ParseConfig(ConfigFile, []byte(src))
	if len(ds) != maxDiags+1 || ds[maxDiags].Rule != "config-too-many-errors" || ds[maxDiags].Message != "50 more problems not shown" {
		t.Fatalf("%d diagnostics, last %v", len(ds), ds[len(ds)-1])
	}
	if err == nil || !strings.Contains(err.Error(), "(250 errors; first: .catalogbot.yaml:4:5:") {
		t.Errorf("error %v", err)
	}
}

// The policy's severities: the highest any selected preset gives a rule, then the rules map; none and an
// absent policy run nothing.
func TestPolicySeverities(t *testing.T) {
	cases := []struct {
		p    PolicyConfig
		want map[string]string
	}{
		{PolicyConfig{}, map[string]string{}},
		{PolicyConfig{Presets: []string{PresetNone}}, map[string]string{}},
		{PolicyConfig{Presets: []string{PresetOLMv1}, Rules: map[string]string{"olmv1-webhooks": PolicyOff, "policy-graph-loop": PolicyWarning}},
			map[string]string{"olmv1-bundle-format": PolicyWarning, "olmv1-all-namespaces": PolicyWarning, "olmv1-dependencies": PolicyWarning,
				"olmv1-operator-conditions": PolicyWarning, "policy-graph-loop": PolicyWarning}},
	}
	for _, c := range cases {
		if got := c.p.Severities(); !maps.Equal(got, c.want) {
			t.Errorf("%+v: got %v, want %v", c.p, got, c.want)
		}
	}
	all := PolicyConfig{Presets: []string{PresetCommunity}}.Severities()
	if all["policy-dangling-bundle"] != PolicyError || all["policy-skiprange-without-replaces"] != PolicyWarning || all["olmv1-webhooks"] != "" {
		t.Errorf("community preset: %v", all)
	}
}
