package build

import (
	"fmt"
	"maps"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

// ConfigsLabel tells OLM where the catalog is in the image (operator-registry's ConfigsLocationLabel).
const ConfigsLabel = "operators.operatorframework.io.index.configs.v1"

// Entrypoint is the entrypoint `opm generate dockerfile` sets.
var Entrypoint = []string{"/bin/opm"}

// OpmCmd is the command `opm generate dockerfile` v1.73.0 sets. That Dockerfile also pre-builds the serve
// cache (RUN opm serve /configs --cache-dir=/tmp/cache --cache-only) and copies /tmp/cache into the image,
// which a daemonless build cannot do. Without that cache `opm serve --cache-dir=...` refuses to start, since
// --cache-enforce-integrity defaults to true whenever --cache-dir is set without --cache-only.
var OpmCmd = []string{"serve", ConfigsDir, "--cache-dir=/tmp/cache"}

// Cmd is the command catalogbot sets: OpmCmd with integrity enforcement off, so opm builds the cache in
// /tmp/cache when the catalog pod starts instead of exiting on the missing cache.
var Cmd = append(append([]string{}, OpmCmd...), "--cache-enforce-integrity=false")

// catalogImage appends the catalog layer to base and sets entrypoint, command, labels (the configs label
// and extra) and creation time.
// When the base records history, a history entry for the layer keeps it aligned with the layers.
func catalogImage(base v1.Image, layer v1.Layer, cmd []string, extra map[string]string, epoch time.Time) (v1.Image, error) {
	baseCfg, err := base.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read base config: %w", err)
	}
	add := mutate.Addendum{Layer: layer}
	if len(baseCfg.History) > 0 {
		add.History = v1.History{
			Created:   v1.Time{Time: epoch},
			CreatedBy: "catalogbot: ADD configs " + ConfigsDir,
			Comment:   "file-based catalog",
		}
	}
	img, err := mutate.Append(base, add)
	if err != nil {
		return nil, fmt.Errorf("append catalog layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.Created = v1.Time{Time: epoch}
	cfg.Config.Entrypoint = append([]string{}, Entrypoint...)
	cfg.Config.Cmd = append([]string{}, cmd...)
	labels := maps.Clone(cfg.Config.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, extra)
	labels[ConfigsLabel] = ConfigsDir
	cfg.Config.Labels = labels
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("set config: %w", err)
	}
	return img, nil
}
