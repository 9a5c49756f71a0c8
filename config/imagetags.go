package config

import (
	"fmt"
	"slices"
	"strings"
)

// A catalog's image (catalogs.image, catalogs.list[].image) and its further tags (catalogs.tags) are
// templates: {version} is the catalog's name, and the Kubernetes placeholders are the parts of the
// Kubernetes version the catalog serves (1.(Y+13) for a catalog named v4.Y, or list[].kubernetes). A
// tag named by the Kubernetes placeholders alone is one a cluster can follow: OLM's
// olm.catalogImageTemplate annotation on a CatalogSource fills them in from the cluster's version.

// The Kubernetes placeholders of an image template.
const (
	KubeMajorPlaceholder = "{kube_major_version}"
	KubeMinorPlaceholder = "{kube_minor_version}"
	KubePatchPlaceholder = "{kube_patch_version}"
)

// imagePlaceholders are the placeholders an image template may use.
var imagePlaceholders = []string{VersionPlaceholder, KubeMajorPlaceholder, KubeMinorPlaceholder, KubePatchPlaceholder}

var placeholderRE = lazyRegexp(`\{[^{}]*\}`)

// tagRE is a tag of an image reference (the distribution spec's).
var tagRE = lazyRegexp(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// unknownPlaceholder is the first {...} of tmpl that is not an image placeholder ("" for none).
func unknownPlaceholder(tmpl string) string {
	for _, p := range placeholderRE().FindAllString(tmpl, -1) {
		if !slices.Contains(imagePlaceholders, p) {
			return p
		}
	}
	return ""
}

// kubePlaceholder is the first Kubernetes placeholder tmpl uses ("" for none).
func kubePlaceholder(tmpl string) string {
	first, at := "", len(tmpl)
	for _, k := range imagePlaceholders[1:] {
		if i := strings.Index(tmpl, k); i >= 0 && i < at {
			first, at = k, i
		}
	}
	return first
}

// FollowsKubernetes tells whether tmpl names its tag by the Kubernetes placeholders alone (no
// {version}): a tag a cluster follows through olm.catalogImageTemplate.
func FollowsKubernetes(tmpl string) bool {
	return kubePlaceholder(tmpl) != "" && !strings.Contains(tmpl, VersionPlaceholder)
}

var kubeVersionRE = lazyRegexp(`^1\.(\d{1,2})(?:\.(\d{1,3}))?$`)

// ExpandImage fills tmpl's placeholders with the catalog's name and its Kubernetes version (1.Y or
// 1.Y.Z; "" when not known). A Kubernetes placeholder without the version (or {kube_patch_version}
// without a patch number) is an error naming what is missing.
func ExpandImage(tmpl, name, kube string) (string, error) {
	out := strings.ReplaceAll(tmpl, VersionPlaceholder, name)
	k := kubePlaceholder(out)
	if k == "" {
		return out, nil
	}
	m := kubeVersionRE().FindStringSubmatch(kube)
	switch {
	case m == nil:
		return "", fmt.Errorf("%q uses %s, but catalog %q has no known Kubernetes version (name it v4.Y, or set kubernetes: in catalogs.list)", tmpl, k, name)
	case m[2] == "" && strings.Contains(out, KubePatchPlaceholder):
		return "", fmt.Errorf("%q uses %s, but catalog %q's Kubernetes version %s has no patch number (set kubernetes: 1.Y.Z in catalogs.list)", tmpl, KubePatchPlaceholder, name, kube)
	}
	return strings.NewReplacer(KubeMajorPlaceholder, "1", KubeMinorPlaceholder, m[1], KubePatchPlaceholder, m[2]).Replace(out), nil
}

// imageRepository is the repository part of an image template (without its tag), and whether the
// template names a tag (not a digest).
func imageRepository(tmpl string) (string, bool) {
	if strings.Contains(tmpl, "@") {
		return tmpl, false
	}
	slash := strings.LastIndex(tmpl, "/")
	if colon := strings.LastIndex(tmpl[slash+1:], ":"); colon >= 0 {
		return tmpl[:slash+1+colon], true
	}
	return tmpl, true
}

// catalogImages resolves one catalog's image template and the further tags (catalogs.tags) into
// references: image, the other references it is pushed under, and the template of the first one a
// cluster follows ("" for none).
func catalogImages(imageTmpl string, tags []string, name, kube string) (image string, more []string, follow string, err error) {
	if imageTmpl == "" {
		return "", nil, "", nil
	}
	if image, err = ExpandImage(imageTmpl, name, kube); err != nil {
		return "", nil, "", err
	}
	if FollowsKubernetes(imageTmpl) {
		follow = imageTmpl
	}
	repo, _ := imageRepository(imageTmpl)
	for _, t := range tags {
		tmpl := repo + ":" + t
		ref, err := ExpandImage(tmpl, name, kube)
		if err != nil {
			return "", nil, "", fmt.Errorf("catalogs.tags: %w", err)
		}
		if ref != image && !slices.Contains(more, ref) {
			more = append(more, ref)
		}
		if follow == "" && FollowsKubernetes(t) {
			follow = tmpl
		}
	}
	return image, more, follow, nil
}

// ResolveImages resolves, outside a configuration (catalogbot publish), an image template and further
// tags of one catalog that serves Kubernetes kube (1.Y or 1.Y.Z; "" when not known) and has no name:
// the image, the further references, and the template a cluster follows ("" for none). An unknown
// placeholder, {version}, a tag that is not a tag, or a Kubernetes placeholder without kube is an error.
func ResolveImages(image string, tags []string, kube string) (string, []string, string, error) {
	if kube != "" && !kubeVersionRE().MatchString(kube) {
		return "", nil, "", fmt.Errorf("the Kubernetes version %q is not 1.Y or 1.Y.Z", kube)
	}
	for i, t := range append([]string{image}, tags...) {
		switch {
		case unknownPlaceholder(t) != "":
			return "", nil, "", fmt.Errorf("%q uses the unknown placeholder %s (%s)", t, unknownPlaceholder(t), placeholderHint)
		case strings.Contains(t, VersionPlaceholder):
			return "", nil, "", fmt.Errorf("%q uses %s, which only a catalog of catalogs: in %s has", t, VersionPlaceholder, ConfigFile)
		case i > 0 && !tagRE().MatchString(sampleImage(t)):
			return "", nil, "", fmt.Errorf("%q is not an image tag (a tag such as v{kube_major_version}.{kube_minor_version}, pushed in the image's repository)", t)
		}
	}
	return catalogImages(image, tags, "", kube)
}

// sampleImage fills tmpl's placeholders with sample values, to check the rest is a reference.
func sampleImage(tmpl string) string {
	return strings.NewReplacer(VersionPlaceholder, "v4.16", KubeMajorPlaceholder, "1", KubeMinorPlaceholder, "29", KubePatchPlaceholder, "0").Replace(tmpl)
}

const placeholderHint = "the placeholders are {version}, {kube_major_version}, {kube_minor_version} and {kube_patch_version}"

// imageTemplate checks an image template at p: known placeholders only, a reference once filled in.
func (d *decoder) imageTemplate(p, tmpl string) bool {
	if u := unknownPlaceholder(tmpl); u != "" {
		d.errorAt(p, "config-bad-value", placeholderHint, "%s: %q uses the unknown placeholder %s", p, tmpl, u)
		return false
	}
	n := len(d.diags)
	d.image(p, sampleImage(tmpl))
	return len(d.diags) == n
}

// validateTags checks catalogs.tags: tags (not references), known placeholders, and an image to tag.
func (d *decoder) validateTags(cc CatalogsConfig) {
	if len(cc.Tags) == 0 {
		return
	}
	images := cc.Image != ""
	for _, e := range cc.List {
		images = images || e.Image != ""
	}
	if !images {
		d.errorAt("catalogs.tags", "config-bad-value", "set catalogs.image (or list[].image): the tags are pushed in its repository",
			"catalogs.tags: set without an image to tag")
	}
	for i, t := range cc.Tags {
		p := fmt.Sprintf("catalogs.tags[%d]", i)
		switch u := unknownPlaceholder(t); {
		case u != "":
			d.errorAt(p, "config-bad-value", placeholderHint, "%s: %q uses the unknown placeholder %s", p, t, u)
		case !tagRE().MatchString(sampleImage(t)):
			d.errorAt(p, "config-bad-value", "a tag such as v{kube_major_version}.{kube_minor_version}, pushed in the image's repository",
				"%s: %q is not an image tag", p, t)
		}
	}
}

// kubeKnown checks that every catalog whose image or tags use a Kubernetes placeholder has the version
// it needs: at is where the template is written, the catalog's own name and Kubernetes version (as
// resolved: "" when not known) say whether it does.
func (d *decoder) kubeKnown(at, tmpl, catalogAt, name, kube string) {
	k := kubePlaceholder(tmpl)
	if k == "" {
		return
	}
	m := kubeVersionRE().FindStringSubmatch(kube)
	switch {
	case m == nil:
		d.errorAt(at, "config-bad-value", "name the catalog v4.Y (Kubernetes 1.(Y+13)), or list it in catalogs.list with kubernetes: such as 1.29",
			"%s: %q uses %s, but catalog %q (%s) has no known Kubernetes version", at, tmpl, k, name, catalogAt)
	case m[2] == "" && strings.Contains(tmpl, KubePatchPlaceholder):
		d.errorAt(at, "config-bad-value", "list the catalog in catalogs.list with kubernetes: 1.Y.Z, or use {kube_major_version}.{kube_minor_version}",
			"%s: %q uses %s, but catalog %q (%s) runs Kubernetes %s, which has no patch number", at, tmpl, KubePatchPlaceholder, name, catalogAt, kube)
	}
}

// publishImageKube refuses Kubernetes placeholders in publish.image: a single catalog serves no known
// Kubernetes version.
func (d *decoder) publishImageKube(image string) bool {
	if u := unknownPlaceholder(image); u != "" {
		d.errorAt("publish.image", "config-bad-value", "publish.image is one image reference", "publish.image: %q uses the placeholder %s", image, u)
		return false
	}
	if k := kubePlaceholder(image); k != "" || strings.Contains(image, VersionPlaceholder) {
		d.errorAt("publish.image", "config-bad-value", "use catalogs: (its image and tags take placeholders; a catalog named v4.Y runs Kubernetes 1.(Y+13), or set list[].kubernetes)",
			"publish.image: %q uses a placeholder, but a single catalog has no version nor Kubernetes version", image)
		return false
	}
	return true
}
