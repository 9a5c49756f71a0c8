package bot

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/pipeline"
)

// SmokeConfig says where the smoke installs of repositories whose .catalogbot.yaml sets smoke.enabled
// run: kind clusters the bot creates per check from a node image (nodeImage, or nodeImages by Kubernetes
// version, the oldest that every changed bundle's minKubeVersion allows), an existing kind cluster
// (kindCluster) or an existing cluster (kubeconfig). Without any of them such a repository's checks end
// action_required: a smoke install the maintainers asked for is never skipped silently.
type SmokeConfig struct {
	Kubeconfig  string            `yaml:"kubeconfig"`
	KindCluster string            `yaml:"kindCluster"`
	NodeImage   string            `yaml:"nodeImage"`
	NodeImages  map[string]string `yaml:"nodeImages"`
	// OLMManifests is a directory with OLM's release manifests (crds.yaml, olm.yaml), installed into
	// clusters that lack OLM.
	OLMManifests string `yaml:"olmManifests"`
	// OLM, when set (v0, v1 or both), is the OLM every repository's catalogs are installed with, in place
	// of their .catalogbot.yaml's smoke.olm and smoke.olmByCatalog. Empty: the repository's choice.
	OLM string `yaml:"olm"`
	// OLMv1Manifests is a directory with OLM v1's manifests (self-contained: CRDs, controllers, their TLS
	// Secrets), installed into clusters that lack OLM v1.
	OLMv1Manifests string `yaml:"olmv1Manifests"`
	// KindConfig is a kind Cluster config file for the clusters the bot creates (e.g. no default CNI, for
	// node images that bring their own).
	KindConfig string `yaml:"kindConfig"`
	// ImageArchives are loaded into the kind nodes besides the catalog (images the nodes cannot pull).
	ImageArchives []string `yaml:"imageArchives"`
	// Concurrency is how many smoke installs this process runs at once (default 1). An existing cluster
	// is shared by every check, whose namespaces and catalog sources would collide: with kubeconfig or
	// kindCluster it must stay 1.
	Concurrency int `yaml:"concurrency"`
}

// configured reports whether bot.yaml gives the smoke stage a cluster.
func (s SmokeConfig) configured() bool {
	return s.Kubeconfig != "" || s.KindCluster != "" || s.NodeImage != "" || len(s.NodeImages) > 0
}

func (s SmokeConfig) validate() []string {
	var problems []string
	clusters := 0 // kinds of cluster given
	for _, set := range []bool{s.Kubeconfig != "", s.KindCluster != "", s.NodeImage != "" || len(s.NodeImages) > 0} {
		if set {
			clusters++
		}
	}
	if clusters > 1 {
		problems = append(problems, "smoke: set one of kubeconfig, kindCluster, or nodeImage/nodeImages")
	}
	if !s.configured() && (s.OLMManifests != "" || s.OLMv1Manifests != "" || len(s.ImageArchives) > 0) {
		problems = append(problems, "smoke: olmManifests, olmv1Manifests and imageArchives need a cluster (kubeconfig, kindCluster, or nodeImage/nodeImages)")
	}
	if s.OLM != "" && !slices.Contains(config.SmokeOLMs, s.OLM) {
		problems = append(problems, fmt.Sprintf("smoke.olm: %q is not one of %s (or empty: each repository's smoke.olm)", s.OLM, strings.Join(config.SmokeOLMs, ", ")))
	}
	if s.KindConfig != "" && s.NodeImage == "" && len(s.NodeImages) == 0 {
		problems = append(problems, "smoke.kindConfig configures the clusters the bot creates: it needs nodeImage or nodeImages")
	}
	if s.Kubeconfig != "" && len(s.ImageArchives) > 0 {
		problems = append(problems, "smoke.imageArchives: images can only be loaded into kind nodes (kindCluster or nodeImage), not into a kubeconfig's cluster")
	}
	switch {
	case s.Concurrency < 0:
		problems = append(problems, "smoke.concurrency must not be negative")
	case s.Concurrency > 1 && (s.Kubeconfig != "" || s.KindCluster != ""):
		problems = append(problems, "smoke.concurrency: an existing cluster (kubeconfig or kindCluster) is shared by every check; it must be 1")
	}
	for _, p := range append([]string{s.Kubeconfig, s.OLMManifests, s.OLMv1Manifests, s.KindConfig}, s.ImageArchives...) {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			problems = append(problems, fmt.Sprintf("smoke: %v", err))
		}
	}
	return problems
}

// smokeSlots bounds the smoke installs running at once in this process.
func newSmokeSlots(s SmokeConfig) chan struct{} {
	return make(chan struct{}, max(1, s.Concurrency))
}

// smokeInput is the pipeline's cluster side of the smoke stage, nil when bot.yaml gives none; the kind
// config file is read when the bot starts.
func (b *Bot) smokeInput() *pipeline.SmokeInput {
	s := b.cfg.Smoke
	if !s.configured() {
		return nil
	}
	in := &pipeline.SmokeInput{KubeconfigPath: s.Kubeconfig, ClusterName: s.KindCluster, NodeImage: s.NodeImage,
		OLMManifestsDir: s.OLMManifests, ImageArchives: slices.Clone(s.ImageArchives), Slots: b.smokeSlots,
		KindConfig: b.kindConfig, OLM: s.OLM, OLMv1ManifestsDir: s.OLMv1Manifests}
	if len(s.NodeImages) > 0 {
		in.NodeImages = maps.Clone(s.NodeImages)
	}
	return in
}
