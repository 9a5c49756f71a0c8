package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
)

var (
	packageRE = lazyRegexp(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
	// allowedRE is a registry host, or a host and a namespace (repository path components) prefix.
	allowedRE  = lazyRegexp(`^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*/?$`)
	platformRE = lazyRegexp(`^[a-z0-9_]+/[a-z0-9_]+(/[a-z0-9_]+)?$`)
	versionRE  = lazyRegexp(`^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
)

// validate checks the values the decoder stored; it only looks at values present in the file (defaults
// are valid), so every diagnostic has a line.
func (d *decoder) validate(c *Config) {
	d.required("apiVersion", c.APIVersion, APIVersion)
	d.required("kind", c.Kind, Kind)
	d.relPath("catalog.dir", c.Catalog.Dir, false)
	d.oneOf("catalog.format", c.Catalog.Format, "json", "yaml")
	d.relPath("references.file", c.References.File, true)
	d.principals("maintainers", c.Maintainers)
	for _, pkg := range sortedKeys(c.Owners) {
		p := join("owners", pkg)
		if !packageRE().MatchString(pkg) {
			d.errorAt(p+"#key", "config-bad-value", "package names are letters, digits, '.', '_' and '-'", "owners: %q is not a package name", pkg)
		}
		d.principals(p, c.Owners[pkg])
	}
	d.ownersFrom(c.OwnersFrom)
	d.each("images.allowedRegistries", c.Images.AllowedRegistries, allowedRE(),
		"a registry host such as quay.io or registry.example.com:5000, or a host/namespace prefix such as quay.io/community-operator-pipeline-prod/")
	d.each("images.requiredPlatforms", c.Images.RequiredPlatforms, platformRE(), "os/arch[/variant], such as linux/amd64")
	if _, set := d.pos["smoke.timeout"]; set {
		if t, err := time.ParseDuration(c.Smoke.Timeout); err != nil || t <= 0 {
			d.errorAt("smoke.timeout", "config-bad-value", "a Go duration such as 10m or 1h30m", "smoke.timeout: %q is not a positive duration", c.Smoke.Timeout)
		}
	}
	if c.Smoke.OLMVersion != "" && !versionRE().MatchString(c.Smoke.OLMVersion) {
		d.errorAt("smoke.olmVersion", "config-bad-value", "a release version such as v0.28.0", "smoke.olmVersion: %q is not a version", c.Smoke.OLMVersion)
	}
	d.smokeClusterVersions(c)
	d.smokeOLM(c)
	if _, set := d.pos["smoke.podSecurity"]; set && !d.failed["smoke.podSecurity"] && c.Smoke.PodSecurity != "restricted" && c.Smoke.PodSecurity != "baseline" {
		d.errorAt("smoke.podSecurity", "config-bad-value", "restricted (the default) or baseline: kind nodes are privileged containers, so the smoke never lets an operator's pods run privileged",
			"smoke.podSecurity: %q is not one of restricted, baseline", c.Smoke.PodSecurity)
	}
	d.oneOf("merge.method", c.Merge.Method, "merge", "squash", "rebase")
	d.oneOf("merge.approvers", c.Merge.Approvers, ApproversOwners, ApproversWrite)
	for i, l := range c.Merge.RequiredLabels {
		if p := fmt.Sprintf("merge.requiredLabels[%d]", i); !d.failed[p] && strings.TrimSpace(l) == "" {
			d.errorAt(p, "config-bad-value", "", "merge.requiredLabels: empty label")
		}
	}
	if c.Merge.RequiredApprovals < 0 {
		d.errorAt("merge.requiredApprovals", "config-bad-value", "", "merge.requiredApprovals: %d is negative", c.Merge.RequiredApprovals)
	}
	d.limits(c.Limits)
	if d.publishImageKube(c.Publish.Image) {
		d.image("publish.image", c.Publish.Image)
	}
	d.image("publish.base", c.Publish.Base)
	d.each("publish.platforms", c.Publish.Platforms, platformRE(), "os/arch[/variant], such as linux/amd64")
	d.validateCatalogs(c)
	d.validatePolicy(c.Policy)
}

// smokeClusterVersions checks smoke.clusterVersions: only with catalogs:, not empty (that would smoke
// nothing while smoke.enabled says to), names of catalogs, each once.
func (d *decoder) smokeClusterVersions(c *Config) {
	const p = "smoke.clusterVersions"
	if _, set := d.pos[p]; !set || d.failed[p] {
		return
	}
	switch {
	case !c.MultiCatalog():
		d.errorAt(p, "config-bad-value", "it limits the catalogs of catalogs.pattern or catalogs.list", "%s: set without catalogs", p)
		return
	case len(c.Smoke.ClusterVersions) == 0:
		d.errorAt(p, "config-bad-value", "list catalogs such as [v4.12, v4.22], or remove the field to smoke every affected catalog", "%s: empty: it would smoke no catalog", p)
		return
	}
	seen := map[string]bool{}
	for i, v := range c.Smoke.ClusterVersions {
		ip := fmt.Sprintf("%s[%d]", p, i)
		if d.failed[ip] {
			continue
		}
		k := strings.TrimPrefix(v, "v")
		switch {
		case !catalogNameRE().MatchString(v):
			d.errorAt(ip, "config-bad-value", "a catalog name or cluster version such as v4.12", "%s: %q is not a catalog name", p, v)
		case seen[k]:
			d.warnAt(ip, "config-duplicate-entry", "", "%s: %q is listed twice", p, v)
		}
		seen[k] = true
	}
}

// required checks a field that must be present with exactly want.
func (d *decoder) required(p, got, want string) {
	if _, set := d.pos[p]; !set || d.nulls[p] {
		d.errorAt(p, "config-missing-field", fmt.Sprintf("add %s: %s", p, want), "missing field %q", p)
		return
	}
	if got != want {
		d.errorAt(p, "config-bad-value", fmt.Sprintf("use %s: %s", p, want), "%s: %q is not %q", p, got, want)
	}
}

func (d *decoder) oneOf(p, got string, allowed ...string) {
	if !slices.Contains(allowed, got) {
		d.errorAt(p, "config-bad-value", "one of: "+strings.Join(allowed, ", "), "%s: %q is not one of %s", p, got, strings.Join(allowed, ", "))
	}
}

// relPath checks a clean path inside the repository; "." is the repository root.
func (d *decoder) relPath(p, v string, optional bool) {
	if v == "" && optional {
		return
	}
	if v == "" || path.IsAbs(v) || path.Clean(v) != v || v == ".." || strings.HasPrefix(v, "../") || strings.Contains(v, `\`) {
		d.errorAt(p, "config-bad-value", "a clean relative path inside the repository, with forward slashes", "%s: %q is not a relative path inside the repository", p, v)
	}
}

// principals checks a list of logins and org/team slugs, warning about repeats.
func (d *decoder) principals(p string, list []string) {
	seen := map[string]bool{}
	for i, s := range list {
		ip := fmt.Sprintf("%s[%d]", p, i)
		if d.failed[ip] {
			continue
		}
		if _, why, ok := ParsePrincipal(s); !ok {
			d.errorAt(ip, "config-bad-login", why, "%s: %q is neither a GitHub login nor org/team", p, s)
			continue
		}
		if k := strings.ToLower(s); seen[k] {
			d.warnAt(ip, "config-duplicate-entry", "logins and teams are case-insensitive", "%s: %q is listed twice", p, s)
		} else {
			seen[k] = true
		}
	}
}

func (d *decoder) each(p string, list []string, re *regexp.Regexp, want string) {
	for i, s := range list {
		if ip := fmt.Sprintf("%s[%d]", p, i); !d.failed[ip] && !re.MatchString(s) {
			d.errorAt(ip, "config-bad-value", "want "+want, "%s: %q is malformed", p, s)
		}
	}
}

func (d *decoder) image(p, ref string) {
	if ref == "" {
		return
	}
	if _, err := name.ParseReference(ref); err != nil {
		d.errorAt(p, "config-bad-value", "an image reference such as quay.io/org/catalog:latest", "%s: %q is not an image reference: %v", p, ref, err)
	}
}

// ownersFrom accepts "ci.yaml", "OWNERS", or a relative path with one {package} segment ending in either.
func (d *decoder) ownersFrom(v string) {
	if v == "" {
		return
	}
	const hint = `"ci.yaml" or "OWNERS" (in each package's catalog directory), or a path such as "operators/{package}/ci.yaml"`
	base := path.Base(v)
	ok := base == CIFile || base == OWNERSFile
	if strings.Contains(v, "/") {
		segs := strings.Split(v, "/")
		ok = ok && strings.Count(v, PackagePlaceholder) == 1 && slices.Contains(segs, PackagePlaceholder) &&
			path.Clean(v) == v && !path.IsAbs(v) && !slices.Contains(segs, "..")
	}
	if !ok {
		d.errorAt("ownersFrom", "config-bad-value", "use "+hint, "ownersFrom: %q is not an owners file name", v)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
