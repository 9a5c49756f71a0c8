package smoke

import (
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// Result is the outcome of one Run. It marshals to the JSON the report embeds.
type Result struct {
	// Cluster is the kind cluster name, or "" for a kubeconfig cluster.
	Cluster string `json:"cluster,omitempty"`
	// OLM is the OLM the run installed with: "v1", or empty for OLM v0 (v0 reports stay as they were).
	OLM string `json:"olm,omitempty"`
	// ClusterCreated says whether Run created the cluster (and so deleted it unless Keep).
	ClusterCreated bool `json:"clusterCreated"`
	// OLMInstalled says whether Run installed OLM (false: it was already there).
	OLMInstalled  bool   `json:"olmInstalled"`
	CatalogSource string `json:"catalogSource,omitempty"`
	// ClusterCatalog is the ClusterCatalog of an OLM v1 run (CatalogSource and CatalogNamespace are empty).
	ClusterCatalog   string          `json:"clusterCatalog,omitempty"`
	CatalogNamespace string          `json:"catalogNamespace,omitempty"`
	CatalogImage     string          `json:"catalogImage"`
	Steps            []StepTiming    `json:"steps"`
	Packages         []PackageResult `json:"packages"`
	// Diagnostics of the shared steps (cluster, OLM, catalog); package ones are in Packages.
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
}

// PackageResult is one package's install.
type PackageResult struct {
	Package string `json:"package"`
	// OLM is "v1" for an OLM v1 install, empty for OLM v0.
	OLM string `json:"olm,omitempty"`
	// ClusterExtension is the OLM v1 object of the install (OLM v1 only).
	ClusterExtension string `json:"clusterExtension,omitempty"`
	// Bundle and Version are the bundle OLM v1 reports installed (status.install.bundle; OLM v1 only).
	Bundle    string `json:"bundle,omitempty"`
	Version   string `json:"version,omitempty"`
	Channel   string `json:"channel,omitempty"`
	Namespace string `json:"namespace"`
	// InstallMode is the OperatorGroup mode used (OLM v0; OLM v1 installs AllNamespaces).
	InstallMode string `json:"installMode"`
	// CSV is the last CSV Run waited for, Phase its last phase (OLM v1: the bundle name expected and the
	// ClusterExtension's last Installed/Progressing reason).
	CSV       string `json:"csv,omitempty"`
	Phase     string `json:"phase,omitempty"`
	Succeeded bool   `json:"succeeded"`
	// UpgradedFrom is the CSV installed first when an upgrade was tested (OLM v1: the base's bundle).
	UpgradedFrom string `json:"upgradedFrom,omitempty"`
	// FromBase says the package was installed from the base catalog first, then upgraded.
	FromBase    bool              `json:"fromBase,omitempty"`
	Steps       []StepTiming      `json:"steps"`
	Diagnostics []diag.Diagnostic `json:"diagnostics,omitempty"`
}

// StepTiming is how long one step took.
type StepTiming struct {
	Step    string  `json:"step"`
	Seconds float64 `json:"seconds"`
	OK      bool    `json:"ok"`
}

// Failed lists the packages that did not succeed.
func (r Result) Failed() []string {
	var out []string
	for _, p := range r.Packages {
		if !p.Succeeded {
			out = append(out, p.Package)
		}
	}
	return out
}

func timing(step string, start time.Time, err error) StepTiming {
	d := time.Since(start).Seconds()
	return StepTiming{Step: step, Seconds: float64(int64(d*10)) / 10, OK: err == nil}
}
