package smoke

import "testing"

func TestOptionsValidateOLMv1(t *testing.T) {
	ok := Options{KubeconfigPath: "k", CatalogImage: testDigest, Packages: []string{"a"}, OLM: OLMv1}
	if err := ok.withDefaults().validate(); err != nil {
		t.Fatalf("valid v1 options rejected: %v", err)
	}
	base := ok
	base.BaseCatalogImage, base.FromBase = testDigest, []string{"a"}
	base.BaseVersions, base.Versions = map[string]string{"a": "1.0.0"}, map[string]string{"a": "2.0.0"}
	if err := base.withDefaults().validate(); err != nil {
		t.Fatalf("valid v1 upgrade options (no Expect needed) rejected: %v", err)
	}
	requireRefused(t, ok, map[string]optionsCase{
		"both":          {func(o *Options) { o.OLM = "both" }, "one OLM per call"},
		"unknown":       {func(o *Options) { o.OLM = "v2" }, `unknown OLM "v2"`},
		"archive":       {func(o *Options) { o.ClusterName, o.CatalogArchive = "kind", "c.tar" }, "pulls catalog images itself"},
		"starting CSV":  {func(o *Options) { o.Upgrade = map[string]string{"a": "a.v1"} }, "no starting CSV"},
		"stray version": {func(o *Options) { o.Versions = map[string]string{"b": "1.0.0"} }, `Versions: package "b" is not in the package list`},
		"empty version": {func(o *Options) { o.BaseVersions = map[string]string{"a": ""} }, `BaseVersions: package "a" has an empty version`},
		"no base version": {func(o *Options) {
			o.BaseCatalogImage, o.FromBase, o.Versions = testDigest, []string{"a"}, map[string]string{"a": "2.0.0"}
		}, "base version (BaseVersions) or head version (Versions) is missing"},
	})
	// v0 ignores what only v1 reads: callers fill Versions for both OLMs from one plan
	v0 := ok
	v0.OLM, v0.Versions, v0.OLMv1ManifestsDir = "", map[string]string{"a": "1.0.0"}, "dir"
	if err := v0.withDefaults().validate(); err != nil {
		t.Errorf("v0 with v1-only fields: %v", err)
	}
}
