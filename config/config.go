package config

import (
	"path"
	"strings"
	"time"
)

// ConfigFile is the repository configuration's file name, read from the base revision.
const ConfigFile = ".catalogbot.yaml"

// APIVersion and Kind identify a configuration document.
const (
	APIVersion = "catalogbot.dev/v1alpha1"
	Kind       = "Config"
)

// Owners file names: a community catalog's per-package ci.yaml lists `reviewers:`, a Kubernetes-style
// OWNERS file lists `approvers:`.
const (
	CIFile     = "ci.yaml"
	OWNERSFile = "OWNERS"
	// PackagePlaceholder stands for the package name in an ownersFrom path ("operators/{package}/ci.yaml").
	PackagePlaceholder = "{package}"
)

// Config is a repository's .catalogbot.yaml. Fields missing from the file keep Default's values.
type Config struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	// Catalog says where the file-based catalog lives.
	Catalog CatalogConfig `yaml:"catalog"`
	// References is the optional references (render) configuration.
	References ReferencesConfig `yaml:"references"`
	// Maintainers are logins or org/team slugs that may change anything.
	Maintainers []string `yaml:"maintainers"`
	// Owners maps a package name to the logins or org/team slugs that own it.
	Owners map[string][]string `yaml:"owners"`
	// OwnersFrom names a per-package owners file: "ci.yaml" or "OWNERS" in the package's catalog
	// directory, or a path with {package} such as "operators/{package}/ci.yaml". Empty: none.
	OwnersFrom string          `yaml:"ownersFrom"`
	Approvals  ApprovalsConfig `yaml:"approvals"`
	Images     ImagesConfig    `yaml:"images"`
	Graph      GraphConfig     `yaml:"graph"`
	Smoke      SmokeConfig     `yaml:"smoke"`
	Merge      MergeConfig     `yaml:"merge"`
	Publish    PublishConfig   `yaml:"publish"`
	Limits     LimitsConfig    `yaml:"limits"`
	// Policy selects the policy stage's rules (policy.go); unset runs none.
	Policy PolicyConfig `yaml:"policy"`
	// Catalogs, when set, makes the repository template-driven with several catalogs (catalogs.go).
	Catalogs CatalogsConfig `yaml:"catalogs,omitempty"`
	// Release configures `catalogbot release` (a bundle directory's release-config.yaml applied to its
	// package's templates).
	Release ReleaseConfig `yaml:"release,omitempty"`
	// Promotion configures the App's promotion of packages into a catalog the catalogs list gains.
	Promotion PromotionConfig `yaml:"promotion,omitempty"`
}

// PromotionConfig: AutoMerge lets the App's own promotion pull requests of packages whose ci.yaml says
// fbc.version_promotion_strategy: always (catalogbot serve promoting them into a catalog a push added to
// catalogs.versions) merge without merge.requiredApprovals and without an owner's approval, when they
// change only that package's ci.yaml and its directory in the new catalog; every other condition and
// stage still applies. review-needed promotions always wait for a maintainer's approval.
type PromotionConfig struct {
	AutoMerge bool `yaml:"autoMerge"`
}

// ReleaseConfig: BundleImage is the image reference a released bundle is named by in the templates, with
// {package} and {version} (the bundle directory's names), such as
// quay.io/community-operator-pipeline-prod/{package}:{version}.
//
// AutoMerge lets the App's own release pull requests (catalogbot serve releasing a merged bundle
// directory) merge without merge.requiredApprovals and without an owner's approval, when they change
// only that package's templates and catalogs; every other condition and stage still applies.
type ReleaseConfig struct {
	BundleImage string `yaml:"bundleImage"`
	AutoMerge   bool   `yaml:"autoMerge"`
}

// CatalogConfig locates the FBC: Dir is relative to the repository root, Format is "json" or "yaml".
type CatalogConfig struct {
	Dir    string `yaml:"dir"`
	Format string `yaml:"format"`
}

// ReferencesConfig names the references file (relative to the repository root); empty means none.
type ReferencesConfig struct {
	File string `yaml:"file"`
}

// ApprovalsConfig: when OwnerReviewSatisfies, an approving review by someone who may make the change
// permits it whoever the author is.
type ApprovalsConfig struct {
	OwnerReviewSatisfies bool `yaml:"ownerReviewSatisfies"`
}

// ImagesConfig is the image policy (see checks/images.Policy).
type ImagesConfig struct {
	RequireDigest     bool     `yaml:"requireDigest"`
	AllowedRegistries []string `yaml:"allowedRegistries"`
	RequiredPlatforms []string `yaml:"requiredPlatforms"`
}

// GraphConfig: AllowModifyReleased permits changing or removing bundles present in the base revision.
type GraphConfig struct {
	AllowModifyReleased bool `yaml:"allowModifyReleased"`
}

// SmokeConfig is kept raw: Timeout is a Go duration string, validated when parsed (see TimeoutDuration).
type SmokeConfig struct {
	Enabled    bool   `yaml:"enabled"`
	OLMVersion string `yaml:"olmVersion"`
	Timeout    string `yaml:"timeout"`
	// ClusterVersions limits, in a repository with catalogs:, which catalogs are smoke-installed (one
	// kind cluster each): catalog names or their OpenShift versions ("v4.12", "4.22"). Unset: every
	// catalog the change affects. An affected catalog outside the list is not installed, and the smoke
	// stage says so (SmokesCatalog).
	ClusterVersions []string `yaml:"clusterVersions"`
	// OLM is the OLM the smoke stage installs with: SmokeOLMv0 (the default when empty), SmokeOLMv1, or
	// SmokeOLMBoth (each catalog once with each). See OLMsFor.
	OLM string `yaml:"olm"`
	// OLMByCatalog, in a repository with catalogs:, chooses the OLM of the catalogs it names (by name or
	// OpenShift version, as ClusterVersions); the first entry naming a catalog wins, OLM is for the rest.
	OLMByCatalog []SmokeOLMEntry `yaml:"olmByCatalog"`
	// PodSecurity is the Pod Security Standard the smoke enforces on every namespace it creates:
	// "restricted" (the default when empty) or "baseline". "privileged" is refused: kind nodes are
	// privileged containers on the machine running the smoke. (omitempty: the decoded form of a
	// configuration without it is unchanged.)
	PodSecurity string `yaml:"podSecurity,omitempty"`
}

// SmokeOLMEntry is one entry of smoke.olmByCatalog.
type SmokeOLMEntry struct {
	ClusterVersions []string `yaml:"clusterVersions"`
	OLM             string   `yaml:"olm"`
}

// The values of smoke.olm.
const (
	SmokeOLMv0   = "v0"
	SmokeOLMv1   = "v1"
	SmokeOLMBoth = "both"
)

// SmokeOLMs are the values smoke.olm and smoke.olmByCatalog[].olm accept.
var SmokeOLMs = []string{SmokeOLMv0, SmokeOLMv1, SmokeOLMBoth}

// SmokesCatalog reports whether the smoke stage installs into the catalog cat (ClusterVersions unset,
// or naming it by name or by OpenShift version, with or without the leading v).
func (s SmokeConfig) SmokesCatalog(cat Catalog) bool {
	return s.ClusterVersions == nil || namesCatalog(s.ClusterVersions, cat)
}

// OLMsFor is the OLMs the smoke stage installs the catalog cat with, in order: ["v0"], ["v1"] or
// ["v0", "v1"]. The first smoke.olmByCatalog entry naming cat chooses; otherwise smoke.olm (default v0).
// A repository without catalogs: passes the zero Catalog.
func (s SmokeConfig) OLMsFor(cat Catalog) []string {
	choice := s.OLM
	for _, e := range s.OLMByCatalog {
		if cat.Name != "" && namesCatalog(e.ClusterVersions, cat) {
			choice = e.OLM
			break
		}
	}
	switch choice {
	case SmokeOLMv1:
		return []string{SmokeOLMv1}
	case SmokeOLMBoth:
		return []string{SmokeOLMv0, SmokeOLMv1}
	}
	return []string{SmokeOLMv0}
}

// namesCatalog reports whether list names cat by name or by OpenShift version, with or without the
// leading v.
func namesCatalog(list []string, cat Catalog) bool {
	for _, v := range list {
		if v == cat.Name || cat.OpenShift != "" && strings.TrimPrefix(v, "v") == strings.TrimPrefix(cat.OpenShift, "v") {
			return true
		}
	}
	return false
}

// TimeoutDuration is Timeout parsed; zero when it does not parse (ParseConfig rejects such files).
func (s SmokeConfig) TimeoutDuration() time.Duration {
	d, err := time.ParseDuration(s.Timeout)
	if err != nil {
		return 0
	}
	return d
}

// MergeConfig: Method is "merge", "squash" or "rebase". Approvers says whose approvals count toward
// RequiredApprovals: ApproversOwners (maintainers and owners of every changed package) or ApproversWrite
// (those, and anyone with write access to the repository).
type MergeConfig struct {
	Method            string   `yaml:"method"`
	RequiredLabels    []string `yaml:"requiredLabels"`
	RequiredApprovals int      `yaml:"requiredApprovals"`
	Approvers         string   `yaml:"approvers"`
}

// Values of merge.approvers.
const (
	ApproversOwners = "owners"
	ApproversWrite  = "write"
)

// PublishConfig: the catalog image to push after a merge, its platforms and base image.
type PublishConfig struct {
	Image     string   `yaml:"image"`
	Platforms []string `yaml:"platforms"`
	Base      string   `yaml:"base"`
	// CommitRendered lets the bot, on a push to the default branch whose committed catalog differs from
	// the one rendered from the references config, commit the rendered catalog back (then publish that
	// commit) instead of refusing to publish.
	CommitRendered bool `yaml:"commitRendered"`
}

// Default is the configuration of a repository without .catalogbot.yaml, and the values missing fields get.
func Default() *Config {
	return &Config{
		APIVersion: APIVersion,
		Kind:       Kind,
		Catalog:    CatalogConfig{Dir: "catalog", Format: "json"},
		Approvals:  ApprovalsConfig{OwnerReviewSatisfies: true},
		Smoke:      SmokeConfig{Timeout: "10m"},
		Merge:      MergeConfig{Method: "squash", Approvers: ApproversOwners},
	}
}

// OwnersFilePath is the repository path of pkg's owners file, or "" when OwnersFrom is not set.
func (c *Config) OwnersFilePath(pkg string) string {
	switch {
	case c.OwnersFrom == "":
		return ""
	case strings.Contains(c.OwnersFrom, "/"):
		return strings.ReplaceAll(c.OwnersFrom, PackagePlaceholder, c.Catalogs.PackageDir(pkg))
	default:
		return path.Join(c.Catalog.Dir, pkg, c.OwnersFrom)
	}
}

// OwnersFilePackage reports whether p is some package's owners file under OwnersFrom, and which package's.
func (c *Config) OwnersFilePackage(p string) (string, bool) {
	if c.OwnersFrom == "" {
		return "", false
	}
	pattern := c.OwnersFrom
	if !strings.Contains(pattern, "/") {
		pattern = path.Join(c.Catalog.Dir, PackagePlaceholder, c.OwnersFrom)
	}
	prefix, suffix, _ := strings.Cut(pattern, PackagePlaceholder)
	if len(p) <= len(prefix)+len(suffix) || !strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, suffix) {
		return "", false
	}
	pkg := p[len(prefix) : len(p)-len(suffix)]
	if strings.Contains(pkg, "/") {
		return "", false
	}
	if strings.Contains(c.OwnersFrom, "/") {
		pkg = c.Catalogs.DirPackage(pkg) // operators/konflux/ci.yaml is konflux-operator's when so declared
	}
	return pkg, true
}

// IsOwnersFileName reports whether a file of this name controls review: ci.yaml, OWNERS, OWNERS_ALIASES.
func IsOwnersFileName(p string) bool {
	switch path.Base(p) {
	case CIFile, OWNERSFile, "OWNERS_ALIASES":
		return true
	}
	return false
}
