package policy

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/diag"
)

// The change rules: what operator-pipelines' detect-changes refuses in one pull request.
const (
	ruleOneOperator     = "policy-one-operator-per-change"
	ruleBundleAndCatlog = "policy-bundle-and-catalog-change"
	ruleOneTemplate     = "policy-one-template-per-catalog"
)

var changeRules = []string{ruleOneOperator, ruleBundleAndCatlog, ruleOneTemplate}

// Mapping is one catalog a package's template renders into (a ci.yaml fbc.catalog_mapping entry's
// catalog name, at File:Line).
type Mapping struct {
	Package, Template, Catalog string
	File                       string
	Line                       int
}

// Change is what a change (a pull request) touched.
type Change struct {
	// Packages are the touched packages; Paths the changed paths (repository-relative, slash-separated).
	Packages []string
	Paths    []string
	// CatalogDirs are the repository's catalog directories (catalog.dir, or every catalog of catalogs:).
	CatalogDirs []string
	// Mappings are the touched packages' template mappings (a template-driven repository).
	Mappings []Mapping
}

// CheckChange applies the change rules sev enables. A bundle file is one under operators/<package>/<version>/
// (the community layout), a catalog file one under a catalog directory or operators/<package>/catalog-templates/.
func CheckChange(ch Change, sev Severities) []diag.Diagnostic {
	var ds []diag.Diagnostic
	add := func(rule, file, pkg, msg, hint string) {
		if s := sev[rule]; s != "" {
			ds = append(ds, diag.Diagnostic{Severity: s, Check: Check, Rule: rule, File: file, Package: pkg, Message: msg, Hint: hint})
		}
	}
	pkgs := slices.Sorted(slices.Values(ch.Packages))
	pkgs = slices.Compact(pkgs)
	if len(pkgs) > 1 {
		add(ruleOneOperator, firstPath(ch.Paths), "", fmt.Sprintf("the change touches %d operators (%s): one operator per pull request", len(pkgs), strings.Join(pkgs, ", ")),
			"split the change into one pull request per operator")
	}
	var bundle, cat string
	for _, p := range ch.Paths {
		switch {
		case isBundlePath(p) && bundle == "":
			bundle = p
		case isCatalogPath(p, ch.CatalogDirs) && cat == "":
			cat = p
		}
	}
	if bundle != "" && cat != "" {
		add(ruleBundleAndCatlog, bundle, "", fmt.Sprintf("the change adds or edits a bundle (%s) and a catalog (%s) together", bundle, cat),
			"release the bundle first, then change the catalog in a pull request of its own")
	}
	first := map[[2]string]Mapping{}
	for _, m := range ch.Mappings {
		k := [2]string{m.Package, m.Catalog}
		prev, seen := first[k]
		switch {
		case !seen:
			first[k] = m
		case prev.Template != m.Template:
			if s := sev[ruleOneTemplate]; s != "" {
				ds = append(ds, diag.Diagnostic{Severity: s, Check: Check, Rule: ruleOneTemplate, File: m.File, Line: m.Line, Package: m.Package,
					Message: fmt.Sprintf("catalog %s of package %q is mapped from two templates, %s (line %d) and %s: which one renders it depends on the order",
						m.Catalog, m.Package, path.Base(prev.Template), prev.Line, path.Base(m.Template)),
					Hint: "map each catalog from one template only (remove it from one of the catalog_names lists)"})
			}
		}
	}
	return diag.Sort(ds)
}

func firstPath(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return slices.Min(paths)
}

// isBundlePath: operators/<package>/<version>/<anything>, but not the package's catalog templates.
func isBundlePath(p string) bool {
	parts := strings.Split(p, "/")
	return len(parts) >= 4 && parts[0] == "operators" && parts[2] != "catalog-templates"
}

func isCatalogPath(p string, dirs []string) bool {
	parts := strings.Split(p, "/")
	if len(parts) >= 4 && parts[0] == "operators" && parts[2] == "catalog-templates" {
		return true
	}
	for _, d := range dirs {
		if d = path.Clean(d); d == "." || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// IsChangeRule reports whether rule judges a whole change (CheckChange, CheckCI, CheckReleaseConfig, CheckBundleDir)
// rather than a catalog (Run): only the pull-request pipeline applies those.
func IsChangeRule(rule string) bool {
	return slices.Contains(changeRules, rule) || slices.Contains([]string{ruleCISchema, ruleReleaseConfig, ruleVersionDirectory, ruleUsingFBC}, rule)
}
