package smoke

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// Options configures Run. Zero values take the defaults documented per field.
type Options struct {
	// KubeconfigPath points at an existing cluster with (or without) OLM. Used when ClusterName is empty
	// and CreateCluster is false.
	KubeconfigPath string
	// ClusterName is the kind cluster to reuse (it must exist unless CreateCluster) or to create.
	// Default "catalogbot-smoke" when CreateCluster is set.
	ClusterName string
	// CreateCluster creates ClusterName with kind, and deletes it at the end (also on failure and on
	// context cancellation) unless Keep.
	CreateCluster bool
	// NodeImage is the kind node image for a created cluster ("" = kind's default for its version).
	NodeImage string
	// KindConfig is a raw kind Cluster config (YAML) for a created cluster, e.g. to disable the default
	// CNI or patch containerd. Empty = one control-plane node.
	KindConfig string
	// Keep keeps what Run created (cluster, namespaces, CatalogSource) for debugging.
	Keep bool
	// KeepCluster keeps a cluster Run created (for more runs in it) but deletes the namespaces and the
	// CatalogSource it created there, as in a cluster it did not create.
	KeepCluster bool
	// OLMManifestsDir holds OLM's manifests (CRDs and deployments, *.yaml applied in name order). Used
	// only when the cluster has no OLM; without it a cluster lacking OLM is a usage error.
	OLMManifestsDir string
	// CatalogImage is the catalog image by digest (repo@sha256:...).
	CatalogImage string
	// BaseCatalogImage is the catalog before the change (repo@sha256:...). When set, the packages of
	// FromBase are installed from it first; then the CatalogSource is pointed at CatalogImage and each of
	// them must upgrade to its Expect CSV, as clusters subscribed to the catalog will after the merge.
	// The other packages install fresh from CatalogImage. See PlanChange.
	BaseCatalogImage string
	// BaseCatalogArchive is an image archive of BaseCatalogImage to load into the kind nodes.
	BaseCatalogArchive string
	// FromBase are the packages installed from BaseCatalogImage first.
	FromBase []string
	// Expect per package: the CSV its install must end at (the head catalog's channel head); required for
	// the packages of FromBase. Missing: whatever CSV the catalog's channel head is.
	Expect map[string]string
	// BundleImages maps the bundle images of the catalogs to their bundles, so that a bundle-unpack Job
	// that cannot pull or unpack is reported against its package and bundle, at once.
	BundleImages map[string]BundleRef
	// CatalogArchive is an image archive (docker-save or OCI layout tar) of CatalogImage to load into the
	// kind nodes; empty when the nodes can pull CatalogImage themselves.
	CatalogArchive string
	// ImageArchives are more archives to load into the nodes (operator and bundle images).
	ImageArchives []string
	// CatalogNamespace is where the CatalogSource is created. Default: OLM's global catalog namespace
	// (read from the catalog-operator's --namespace flag).
	CatalogNamespace string
	// Packages to install, each in its own namespace.
	Packages []string
	// Channel per package; default the package's default channel (Subscription without channel).
	Channel map[string]string
	// InstallModes per package: the install mode types its CSV supports ("AllNamespaces",
	// "OwnNamespace", "SingleNamespace", "MultiNamespace"). Default AllNamespaces. See InstallModesOf.
	InstallModes map[string][]string
	// Upgrade per package: a CSV name to install first (Subscription startingCSV); Run then approves
	// the upgrade to the channel head and waits for it too.
	Upgrade map[string]string
	// Timeout bounds each step (cluster creation, OLM, catalog, each package install). Default 5m.
	Timeout time.Duration
	// Parallel bounds how many packages install at once. Default 2.
	Parallel int
	// CrashLoopRestarts fails an install early once a container in the package's namespace restarted
	// this many times. Default 3.
	CrashLoopRestarts int32
	// Progress receives one line per step (stderr in the CLI); nil = discard.
	Progress io.Writer
	// PodSecurity is the Pod Security Standard enforced (and warned and audited) on every namespace Run
	// creates, for either OLM: PodSecurityRestricted (the default when empty) or PodSecurityBaseline.
	// Run checks that the cluster enforces it before installing there. "privileged" is refused.
	PodSecurity string

	// OLM is the OLM Run installs with: "v0" (the default when empty: CatalogSource, Subscription,
	// CSV) or "v1" (ClusterCatalog, ClusterExtension). One OLM per Run; callers wanting both call Run
	// once per OLM.
	OLM string
	// OLMv1ManifestsDir holds OLM v1's manifests (*.yaml applied in name order, self-contained: CRDs,
	// controllers, their TLS Secrets and the webhook's caBundle). Used only with OLM "v1" and only when
	// the cluster has no ClusterCatalog CRD; Run then waits for the olmv1-system Deployments.
	OLMv1ManifestsDir string
	// Versions per package (OLM v1): the head catalog's bundle version the install must end at; the
	// ClusterExtension's version is pinned to it. Required for the packages of FromBase. Missing:
	// whatever OLM v1 resolves. See PlanChange.
	Versions map[string]string
	// BaseVersions per package (OLM v1): the base catalog's bundle version the packages of FromBase
	// are installed at first, before the ClusterCatalog serves CatalogImage and the version is switched
	// to Versions.
	BaseVersions map[string]string
}

// OLM versions Run installs with (Options.OLM, Result.OLM).
const (
	OLMv0 = "v0"
	OLMv1 = "v1"
)

// v1 reports whether Run installs with OLM v1.
func (o Options) v1() bool { return o.OLM == OLMv1 }

// DefaultClusterName is the kind cluster name used when CreateCluster is set without a name.
const DefaultClusterName = "catalogbot-smoke"

func (o Options) withDefaults() Options {
	if o.CreateCluster && o.ClusterName == "" {
		o.ClusterName = DefaultClusterName
	}
	if o.Timeout <= 0 {
		o.Timeout = 5 * time.Minute
	}
	if o.Parallel <= 0 {
		o.Parallel = 2
	}
	if o.CrashLoopRestarts <= 0 {
		o.CrashLoopRestarts = 3
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.PodSecurity == "" {
		o.PodSecurity = PodSecurityRestricted
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if o.ClusterName == "" && !o.CreateCluster && o.KubeconfigPath == "" {
		errs = append(errs, errors.New("no cluster: set a kubeconfig, a kind cluster name, or create a cluster"))
	}
	if !strings.Contains(o.CatalogImage, "@sha256:") {
		errs = append(errs, fmt.Errorf("catalog image %q is not referenced by digest (repo@sha256:...): OLM pulls tags with imagePullPolicy Always", o.CatalogImage))
	}
	if o.BaseCatalogImage != "" && !strings.Contains(o.BaseCatalogImage, "@sha256:") {
		errs = append(errs, fmt.Errorf("base catalog image %q is not referenced by digest (repo@sha256:...)", o.BaseCatalogImage))
	}
	if o.BaseCatalogImage == "" && (len(o.FromBase) > 0 || o.BaseCatalogArchive != "") {
		errs = append(errs, errors.New("packages to install from the base catalog, or its archive, without a base catalog image"))
	}
	if (o.CatalogArchive != "" || o.BaseCatalogArchive != "" || len(o.ImageArchives) > 0) && o.ClusterName == "" {
		errs = append(errs, errors.New("image archives can only be loaded into a kind cluster (set a cluster name)"))
	}
	if len(o.Packages) == 0 {
		errs = append(errs, errors.New("no packages to install"))
	}
	seen := map[string]bool{}
	for _, p := range o.Packages {
		if seen[p] {
			errs = append(errs, fmt.Errorf("package %q listed twice", p))
		}
		seen[p] = true
	}
	for p := range o.Upgrade {
		if !seen[p] {
			errs = append(errs, fmt.Errorf("upgrade configured for package %q, which is not in the package list", p))
		}
	}
	for _, p := range o.FromBase {
		switch {
		case !seen[p]:
			errs = append(errs, fmt.Errorf("package %q is to be installed from the base catalog, but it is not in the package list", p))
		case o.Expect[p] == "" && !o.v1():
			errs = append(errs, fmt.Errorf("package %q is to be installed from the base catalog, but no CSV is expected after the upgrade (Expect)", p))
		case o.Upgrade[p] != "":
			errs = append(errs, fmt.Errorf("package %q: a starting CSV and an install from the base catalog exclude each other", p))
		}
	}
	for p, modes := range o.InstallModes {
		for _, m := range modes {
			if !knownInstallMode[m] {
				errs = append(errs, fmt.Errorf("package %q: unknown install mode %q", p, m))
			}
		}
	}
	if o.PodSecurity != PodSecurityRestricted && o.PodSecurity != PodSecurityBaseline {
		errs = append(errs, fmt.Errorf("pod security %q: the smoke enforces %q or %q on the namespaces it creates (kind nodes are privileged containers: a privileged pod would reach the machine running the smoke)", o.PodSecurity, PodSecurityRestricted, PodSecurityBaseline))
	}
	errs = append(errs, o.kindConfigMounts()...)
	errs = append(errs, o.validateOLM(seen)...)
	if err := errors.Join(errs...); err != nil {
		return diag.UsageError(fmt.Errorf("smoke options: %w", err))
	}
	return nil
}

var knownInstallMode = map[string]bool{"AllNamespaces": true, "OwnNamespace": true, "SingleNamespace": true, "MultiNamespace": true}

// validateOLM checks the choice of OLM and what only OLM v1 reads. seen holds the packages.
func (o Options) validateOLM(seen map[string]bool) []error {
	var errs []error
	switch o.OLM {
	case "", OLMv0:
		return nil
	case OLMv1:
	case "both":
		return []error{errors.New(`OLM "both": Run installs with one OLM per call (call it once with "v0" and once with "v1")`)}
	default:
		return []error{fmt.Errorf("unknown OLM %q (want %q or %q)", o.OLM, OLMv0, OLMv1)}
	}
	if o.CatalogArchive != "" || o.BaseCatalogArchive != "" {
		errs = append(errs, errors.New("OLM v1 pulls catalog images itself from a registry: a catalog archive loaded into the nodes does not reach it (push the catalog and give its reference)"))
	}
	if len(o.Upgrade) > 0 {
		errs = append(errs, errors.New("OLM v1 has no starting CSV: test upgrades with a base catalog (FromBase, BaseVersions, Versions)"))
	}
	for _, field := range []struct {
		name string
		m    map[string]string
	}{{"Versions", o.Versions}, {"BaseVersions", o.BaseVersions}} {
		for p, v := range field.m {
			switch {
			case !seen[p]:
				errs = append(errs, fmt.Errorf("%s: package %q is not in the package list", field.name, p))
			case v == "":
				errs = append(errs, fmt.Errorf("%s: package %q has an empty version", field.name, p))
			}
		}
	}
	for _, p := range o.FromBase {
		if o.BaseVersions[p] == "" || o.Versions[p] == "" {
			errs = append(errs, fmt.Errorf("package %q is to be installed from the base catalog with OLM v1, but its base version (BaseVersions) or head version (Versions) is missing", p))
		}
	}
	return errs
}
