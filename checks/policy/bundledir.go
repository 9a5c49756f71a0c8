package policy

import (
	"fmt"
	"path"
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/catalogbot/catalogbot/diag"
)

// The bundle directory rules: what operator-pipelines checks of a bundle directory a pull request adds
// or edits (operators/<package>/<version>/, the community layout).
const (
	ruleVersionDirectory = "policy-operator-version-directory"
	ruleUsingFBC         = "policy-using-fbc"
)

// BundleDir is a bundle directory a change touched, as the change's head holds it.
type BundleDir struct {
	// Dir is operators/<package>/<version> (repository-relative, slash-separated).
	Dir string
	// Manifests are the files of Dir/manifests by name (nil when the change removed the bundle).
	Manifests map[string][]byte
	// CI is the package's operators/<package>/ci.yaml (nil when it has none).
	CI []byte
}

// CheckBundleDir applies, when sev enables them, check_operator_version_directory_name (the directory is
// named after its CSV's spec.version, reported on that line) and check_using_fbc (a warning, as upstream:
// the package's ci.yaml does not enable fbc, so its catalogs are not file-based-catalog templates).
func CheckBundleDir(bd BundleDir, sev Severities) []diag.Diagnostic {
	if len(bd.Manifests) == 0 {
		return nil
	}
	var ds []diag.Diagnostic
	pkg := path.Base(path.Dir(bd.Dir))
	if s := sev[ruleVersionDirectory]; s != "" {
		file, version, node := bundleCSVVersion(bd.Manifests)
		if dir := path.Base(bd.Dir); file != "" && version != dir {
			line := 1
			if node != nil {
				line = node.Line
			}
			ds = append(ds, diag.Diagnostic{Severity: s, Check: Check, Rule: ruleVersionDirectory, File: path.Join(bd.Dir, "manifests", file), Line: line, Package: pkg,
				Message: fmt.Sprintf("bundle directory %s is not named after its CSV's spec.version %q", bd.Dir, version),
				Hint:    fmt.Sprintf("move the bundle to %s/%s, or set spec.version to %s", path.Dir(bd.Dir), version, dir)})
		}
	}
	if s := sev[ruleUsingFBC]; s != "" && !fbcEnabled(bd.CI) {
		ds = append(ds, diag.Diagnostic{Severity: diag.Warning, Check: Check, Rule: ruleUsingFBC, File: path.Join(path.Dir(bd.Dir), "ci.yaml"), Package: pkg,
			Message: fmt.Sprintf("package %q does not use file-based catalogs (fbc.enabled in its ci.yaml): operator-pipelines recommends them, and new operators should start with them", pkg),
			Hint:    "set fbc.enabled: true and map the package's catalogs from catalog templates (fbc.catalog_mapping)"})
	}
	return ds
}

// bundleCSVVersion finds the ClusterServiceVersion among a bundle's manifests (by name order) and
// returns its file, its spec.version and that value's node.
func bundleCSVVersion(manifests map[string][]byte) (file, version string, node *yaml.Node) {
	names := make([]string, 0, len(manifests))
	for name := range manifests {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		data := manifests[name]
		if len(data) > maxManifestBytes {
			continue
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
			continue
		}
		root := doc.Content[0]
		if v := mapValue(root, "kind"); v == nil || v.Value != "ClusterServiceVersion" {
			continue
		}
		if spec := mapValue(root, "spec"); spec != nil {
			if v := mapValue(spec, "version"); v != nil {
				return name, v.Value, v
			}
		}
		return name, "", nil
	}
	return "", "", nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for k, v := range pairs(m) {
		if k.Value == key {
			return v
		}
	}
	return nil
}

// fbcEnabled reports whether a ci.yaml sets fbc.enabled: true.
func fbcEnabled(ci []byte) bool {
	var doc yaml.Node
	if len(ci) == 0 || len(ci) > maxCIBytes || yaml.Unmarshal(ci, &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	fbc := mapValue(doc.Content[0], "fbc")
	if fbc == nil {
		return false
	}
	v := mapValue(fbc, "enabled")
	return v != nil && v.Tag == "!!bool" && v.Value == "true"
}
