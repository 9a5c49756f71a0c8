package config

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// CatalogsConfig describes the catalogs of a template-driven repository (the community-operators
// layout): one catalog per cluster version, templates in operators/<package>/catalog-templates/ mapped to
// catalogs by operators/<package>/ci.yaml. Either a Pattern (with {version}) or a List; empty means the
// repository is a single catalog (Catalog.Dir).
//
//	catalogs:
//	  pattern: catalogs/{version}
//	  image: quay.io/example/index:{version}
//	  versions: [v4.12, v4.13]          # default: the directories the pattern matches
//	  migrateLevel: bundle-object-to-csv-metadata
//	  migrateFrom: v4.17                # versions from this one on use migrateLevel
//	  opmVersion: v1.46.0               # the opm whose template rendering the catalogs keep
//	  packages:                         # per package, by its directory under operators/
//	    clusterpulse: {opmVersion: v1.46.0}
//	    konflux: {package: konflux-operator}   # the directory holds another package name
//	  tags: ["v{kube_major_version}.{kube_minor_version}"]  # also pushed under, per catalog
type CatalogsConfig struct {
	Pattern      string         `yaml:"pattern"`
	Image        string         `yaml:"image"`
	Versions     []string       `yaml:"versions"`
	MigrateLevel string         `yaml:"migrateLevel"`
	MigrateFrom  string         `yaml:"migrateFrom"`
	List         []CatalogEntry `yaml:"list"`
	// Tags are further tags each catalog's image is pushed under, in its image's repository (such as
	// v{kube_major_version}.{kube_minor_version}: a tag a cluster follows).
	Tags []string `yaml:"tags"`
	// OPMVersion is the opm release whose template rendering the committed catalogs keep (the one the
	// repository's Makefile pins; one of OPMVersions). Empty: the newest catalogbot reproduces.
	OPMVersion string `yaml:"opmVersion"`
	// Packages holds settings of one package, keyed by the package's directory under operators/ (the
	// directory its ci.yaml and templates are in, which names its directory in every catalog).
	Packages map[string]CatalogPackage `yaml:"packages"`
}

// CatalogPackage is one package's entry of catalogs.packages.
type CatalogPackage struct {
	// Package is the name of the package the directory holds when it is not the directory's name
	// (upstream's operators/konflux/ renders package konflux-operator into catalogs/*/konflux/).
	Package string `yaml:"package"`
	// OPMVersion is the opm release whose template rendering this package's committed catalogs keep
	// (upstream's render script fetched whichever opm was current when the package was last rendered),
	// overriding catalogs.opmVersion for it.
	OPMVersion string `yaml:"opmVersion"`
}

// OPMVersions are the opm releases whose template rendering catalogbot reproduces byte for byte
// (render/template holds itself to the same list).
var OPMVersions = []string{"v1.46.0", "v1.73.0"}

// CatalogEntry is one catalog of the list form.
type CatalogEntry struct {
	Name string `yaml:"name"`
	Dir  string `yaml:"dir"`
	// Image is the index image the catalog is published as.
	Image string `yaml:"image"`
	// OpenShift is the cluster version the catalog serves ("4.16"); Kubernetes is derived from it
	// unless set ("1.29", or "1.29.3" for an image that uses {kube_patch_version}).
	OpenShift    string `yaml:"openshift"`
	Kubernetes   string `yaml:"kubernetes"`
	MigrateLevel string `yaml:"migrateLevel"`
}

// VersionPlaceholder stands for a catalog's version in a catalogs pattern or image.
const VersionPlaceholder = "{version}"

// Catalog is one configured catalog, resolved.
type Catalog struct {
	Name  string
	Dir   string
	Image string
	// Tags are the further references the image is pushed under (catalogs.tags, resolved).
	Tags []string
	// FollowImage is the template (such as quay.io/org/index:v{kube_major_version}.{kube_minor_version})
	// of the first of Image and Tags named by the Kubernetes placeholders alone: what a CatalogSource's
	// olm.catalogImageTemplate follows; "" for none.
	FollowImage  string
	OpenShift    string
	Kubernetes   string
	MigrateLevel string
	// OPMVersion is catalogs.opmVersion ("" for the default).
	OPMVersion string
	// Packages is catalogs.packages: per package directory, its package name and opm pin.
	Packages map[string]CatalogPackage
}

// MultiCatalog reports whether the configuration describes several catalogs.
func (c *Config) MultiCatalog() bool {
	return c.Catalogs.Pattern != "" || len(c.Catalogs.List) > 0
}

var openshiftVersionRE = lazyRegexp(`^v?4\.(\d{1,2})$`)

// KubernetesOf is the Kubernetes minor version OpenShift 4.Y runs: 1.(Y+13). ok is false for a version
// that is not 4.Y.
func KubernetesOf(openshift string) (string, bool) {
	m := openshiftVersionRE().FindStringSubmatch(openshift)
	if m == nil {
		return "", false
	}
	y, _ := strconv.Atoi(m[1])
	return fmt.Sprintf("1.%d", y+13), true
}

// ResolveCatalogs lists the configured catalogs of a multi-catalog configuration, in version order. A
// pattern without versions takes the directories it matches under root (the repository checkout).
func (c *Config) ResolveCatalogs(root string) ([]Catalog, error) {
	cc := c.Catalogs
	if len(cc.List) > 0 {
		out := make([]Catalog, 0, len(cc.List))
		for _, e := range cc.List {
			k := e.Kubernetes
			if k == "" {
				k, _ = KubernetesOf(e.OpenShift)
			}
			cat := Catalog{Name: e.Name, Dir: e.Dir, OpenShift: strings.TrimPrefix(e.OpenShift, "v"), Kubernetes: k, MigrateLevel: e.MigrateLevel, OPMVersion: cc.OPMVersion,
				Packages: cc.Packages}
			if err := cat.images(e.Image, cc.Tags); err != nil {
				return nil, err
			}
			out = append(out, cat)
		}
		return out, distinctImages(out)
	}
	versions := cc.Versions
	if len(versions) == 0 {
		parent, rest, _ := strings.Cut(cc.Pattern, VersionPlaceholder)
		if rest != "" || !strings.HasSuffix(parent, "/") {
			return nil, fmt.Errorf("catalogs.pattern %q: without versions, {version} must be the last path element", cc.Pattern)
		}
		entries, err := fs.ReadDir(os.DirFS(root), strings.TrimSuffix(parent, "/"))
		if err != nil {
			return nil, fmt.Errorf("listing catalogs for %s: %w", cc.Pattern, err)
		}
		for _, e := range entries {
			if e.IsDir() {
				versions = append(versions, e.Name())
			}
		}
	}
	versions = append([]string(nil), versions...)
	sort.SliceStable(versions, func(i, j int) bool { return versionLess(versions[i], versions[j]) })
	out := make([]Catalog, 0, len(versions))
	for _, v := range versions {
		cat := Catalog{Name: v, Dir: strings.ReplaceAll(cc.Pattern, VersionPlaceholder, v), OPMVersion: cc.OPMVersion,
			Packages: cc.Packages}
		if k, ok := KubernetesOf(v); ok {
			cat.OpenShift, cat.Kubernetes = strings.TrimPrefix(v, "v"), k
		}
		if err := cat.images(cc.Image, cc.Tags); err != nil {
			return nil, err
		}
		if cc.MigrateLevel != "" && (cc.MigrateFrom == "" || !versionLess(v, cc.MigrateFrom)) {
			cat.MigrateLevel = cc.MigrateLevel
		}
		out = append(out, cat)
	}
	return out, distinctImages(out)
}

// PackageDir is the directory (under operators/ and in each catalog) holding package pkg: the one
// catalogs.packages declares for it, else pkg itself.
func (cc CatalogsConfig) PackageDir(pkg string) string {
	for dir, p := range cc.Packages {
		if p.Package == pkg {
			return dir
		}
	}
	return pkg
}

// DirPackage is the package the directory dir holds: the one catalogs.packages declares, else dir.
func (cc CatalogsConfig) DirPackage(dir string) string {
	if p := cc.Packages[dir].Package; p != "" {
		return p
	}
	return dir
}

// images resolves the catalog's image template and further tags.
func (c *Catalog) images(image string, tags []string) error {
	var err error
	if c.Image, c.Tags, c.FollowImage, err = catalogImages(image, tags, c.Name, c.Kubernetes); err != nil {
		return fmt.Errorf("catalog %s: %w", c.Name, err)
	}
	return nil
}

// distinctImages refuses two catalogs pushed under the same reference: one would overwrite the other
// (two catalogs of one Kubernetes version, say).
func distinctImages(cats []Catalog) error {
	seen := map[string]string{}
	for _, c := range cats {
		for _, ref := range append([]string{c.Image}, c.Tags...) {
			if ref == "" {
				continue
			}
			if other, ok := seen[ref]; ok && other != c.Name {
				return fmt.Errorf("catalogs %s and %s are both pushed as %s: give each catalog its own tags", other, c.Name, ref)
			}
			seen[ref] = c.Name
		}
	}
	return nil
}

// versionLess orders versions such as v4.9 < v4.12 by their numbers, other names as strings.
func versionLess(a, b string) bool {
	na, oka := versionNumbers(a)
	nb, okb := versionNumbers(b)
	if !oka || !okb {
		return a < b
	}
	for i := 0; i < len(na) && i < len(nb); i++ {
		if na[i] != nb[i] {
			return na[i] < nb[i]
		}
	}
	return len(na) < len(nb)
}

func versionNumbers(v string) ([]int, bool) {
	var out []int
	for _, p := range strings.Split(strings.TrimPrefix(v, "v"), ".") {
		n, err := strconv.Atoi(p)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

var catalogNameRE = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// validateCatalogs checks the catalogs section: one form only, names and paths safe, placeholders where
// they must be, known migrate levels, cluster versions of the form 4.Y.
func (d *decoder) validateCatalogs(c *Config) {
	cc := c.Catalogs
	levels := []string{"", "none", "bundle-object-to-csv-metadata", "all"}
	if cc.OPMVersion != "" && !slices.Contains(OPMVersions, cc.OPMVersion) {
		d.errorAt("catalogs.opmVersion", "config-bad-value", "one of: "+strings.Join(OPMVersions, ", "),
			"catalogs.opmVersion: %q is not an opm whose rendering catalogbot reproduces", cc.OPMVersion)
	}
	declared := map[string]string{}
	for _, pkg := range slices.Sorted(maps.Keys(cc.Packages)) {
		p := "catalogs.packages." + pkg
		if !catalogNameRE().MatchString(pkg) {
			d.errorAt(p+"#key", "config-bad-value", "the package's directory under operators/", "catalogs.packages: %q is not a package directory name", pkg)
		}
		if name := cc.Packages[pkg].Package; name != "" && !catalogNameRE().MatchString(name) {
			d.errorAt(p+".package", "config-bad-value", "letters, digits, '.', '_' and '-'", "%s.package: %q is not a package name", p, name)
		} else if other, ok := cc.Packages[name]; name != "" && name != pkg && (declared[name] != "" || ok && other.Package == "") {
			d.errorAt(p+".package", "config-bad-value", "one directory per package", "%s.package: package %q is held by another directory too", p, name)
		}
		if name := cc.Packages[pkg].Package; name != "" {
			declared[name] = pkg
		}
		if v := cc.Packages[pkg].OPMVersion; v != "" && !slices.Contains(OPMVersions, v) {
			d.errorAt(p+".opmVersion", "config-bad-value", "one of: "+strings.Join(OPMVersions, ", "),
				"%s.opmVersion: %q is not an opm whose rendering catalogbot reproduces", p, v)
		}
	}
	if len(cc.Packages) > 0 && cc.Pattern == "" && len(cc.List) == 0 {
		d.errorAt("catalogs.packages", "config-bad-value", "it belongs with catalogs.pattern or catalogs.list", "catalogs.packages: set without catalogs")
	}
	if cc.Pattern != "" && len(cc.List) > 0 {
		d.errorAt("catalogs.list", "config-bad-value", "use either catalogs.pattern or catalogs.list", "catalogs: both a pattern and a list")
		return
	}
	if cc.Pattern != "" {
		d.relPath("catalogs.pattern", strings.ReplaceAll(cc.Pattern, VersionPlaceholder, "v"), false)
		if !strings.Contains(cc.Pattern, VersionPlaceholder) {
			d.errorAt("catalogs.pattern", "config-bad-value", "such as catalogs/{version}", "catalogs.pattern: %q has no {version}", cc.Pattern)
		}
		switch {
		case cc.Image == "" || !d.imageTemplate("catalogs.image", cc.Image):
		case !strings.Contains(cc.Image, VersionPlaceholder) && kubePlaceholder(cc.Image) == "":
			d.errorAt("catalogs.image", "config-bad-value", "such as quay.io/example/index:{version}", "catalogs.image: %q has no {version}: every catalog would publish to the same tag", cc.Image)
		default:
			for i, v := range cc.Versions {
				k, _ := KubernetesOf(v)
				d.kubeKnown("catalogs.image", cc.Image, fmt.Sprintf("catalogs.versions[%d]", i), v, k)
			}
		}
		d.validateTags(cc)
		for _, t := range cc.Tags {
			for i, v := range cc.Versions {
				k, _ := KubernetesOf(v)
				d.kubeKnown("catalogs.tags", t, fmt.Sprintf("catalogs.versions[%d]", i), v, k)
			}
		}
		for i, v := range cc.Versions {
			if !catalogNameRE().MatchString(v) {
				d.errorAt(fmt.Sprintf("catalogs.versions[%d]", i), "config-bad-value", "letters, digits, '.', '_' and '-'", "catalogs.versions: %q is not a version name", v)
			}
		}
		d.oneOf("catalogs.migrateLevel", cc.MigrateLevel, levels...)
		if cc.MigrateFrom != "" {
			if _, ok := versionNumbers(cc.MigrateFrom); !ok {
				d.errorAt("catalogs.migrateFrom", "config-bad-value", "a version such as v4.17", "catalogs.migrateFrom: %q is not a version", cc.MigrateFrom)
			}
		}
		return
	}
	for _, f := range []struct{ p, v string }{{"catalogs.image", cc.Image}, {"catalogs.migrateLevel", cc.MigrateLevel}, {"catalogs.migrateFrom", cc.MigrateFrom}} {
		if f.v != "" {
			d.errorAt(f.p, "config-bad-value", "it belongs with catalogs.pattern", "%s: set without catalogs.pattern", f.p)
		}
	}
	d.validateTags(cc)
	names, dirs := map[string]bool{}, map[string]bool{}
	for i, e := range cc.List {
		p := fmt.Sprintf("catalogs.list[%d]", i)
		if !catalogNameRE().MatchString(e.Name) {
			d.errorAt(p+".name", "config-bad-value", "letters, digits, '.', '_' and '-'", "%s.name: %q is not a catalog name", p, e.Name)
		} else if names[e.Name] {
			d.errorAt(p+".name", "config-bad-value", "", "%s.name: catalog %q is listed twice", p, e.Name)
		}
		names[e.Name] = true
		d.relPath(p+".dir", e.Dir, false)
		if dirs[path.Clean(e.Dir)] {
			d.errorAt(p+".dir", "config-bad-value", "", "%s.dir: %q is another catalog's directory", p, e.Dir)
		}
		dirs[path.Clean(e.Dir)] = true
		k := e.Kubernetes
		if k == "" {
			k, _ = KubernetesOf(e.OpenShift)
		}
		if e.Image != "" && d.imageTemplate(p+".image", e.Image) {
			d.kubeKnown(p+".image", e.Image, p, e.Name, k)
			for _, t := range cc.Tags {
				d.kubeKnown(p, t, p, e.Name, k)
			}
		}
		if e.OpenShift != "" {
			if _, ok := KubernetesOf(e.OpenShift); !ok {
				d.errorAt(p+".openshift", "config-bad-value", "such as 4.16", "%s.openshift: %q is not an OpenShift 4.Y version", p, e.OpenShift)
			}
		}
		if e.Kubernetes != "" && !kubeVersionRE().MatchString(e.Kubernetes) {
			d.errorAt(p+".kubernetes", "config-bad-value", "such as 1.29 (or 1.29.3)", "%s.kubernetes: %q is not a Kubernetes 1.Y or 1.Y.Z version", p, e.Kubernetes)
		}
		d.oneOf(p+".migrateLevel", e.MigrateLevel, levels...)
	}
}
