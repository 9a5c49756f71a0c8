package pipeline

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	"github.com/blang/semver/v4"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/report"
)

// SmokeInput is the cluster side of the smoke stage: what the repository configuration cannot say.
type SmokeInput struct {
	// KubeconfigPath uses an existing cluster; otherwise a kind cluster is created (and deleted).
	KubeconfigPath string
	// NodeImage is the kind node image; OLMManifestsDir installs OLM when the cluster lacks it.
	NodeImage, OLMManifestsDir string
	// NodeImages maps Kubernetes versions ("v1.33.13") to kind node images; when NodeImage is empty the
	// oldest version satisfying every changed bundle's minKubeVersion is used.
	NodeImages map[string]string
	// ImageArchives are loaded into kind nodes besides the catalog (bundle and operator images for
	// clusters that cannot pull them).
	ImageArchives []string
	Keep          bool
}

// smoke builds the head's catalog image for this machine's platform, loads it into a kind cluster by
// digest, and installs every changed package that is in the head catalog.
func (s *state) smoke(ctx context.Context) report.Stage {
	if !s.cfg.Smoke.Enabled {
		return report.Stage{Status: report.Skipped, Summary: "smoke install is disabled (smoke.enabled in " + config.ConfigFile + ")"}
	}
	if s.in.Smoke == nil {
		return stageFromErr(diag.UsageError(fmt.Errorf("smoke.enabled is set in %s, but this run has no cluster settings (catalogbot pr --smoke-node-image or --smoke-kubeconfig, or the bot's smoke configuration)", config.ConfigFile)))
	}
	inHead := map[string]bool{}
	for _, p := range s.changes.head.Packages {
		inHead[p.Name] = true
	}
	var pkgs []string
	for p := range s.changes.packages {
		if inHead[p] {
			pkgs = append(pkgs, p)
		}
	}
	sort.Strings(pkgs)
	if len(pkgs) == 0 {
		return report.Stage{Status: report.Skipped, Summary: "no changed package to install"}
	}
	tmp, err := os.MkdirTemp("", "catalogbot-smoke-")
	if err != nil {
		return stageFromErr(err)
	}
	defer os.RemoveAll(tmp)
	img, err := build.Image(ctx, path.Join(s.headDir, s.catalogDir()), build.Options{
		Base:      s.cfg.Publish.Base,
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
		// The run's registry options (in the bot: its repository's credentials only).
		RemoteOptions: s.in.RemoteOptions,
	})
	if err != nil {
		return stageFromErr(err)
	}
	dig, err := img.Digest()
	if err != nil {
		return stageFromErr(err)
	}
	repo := "catalogbot.local/smoke/catalog"
	archive := filepath.Join(tmp, "catalog.tar")
	if err := build.WriteLayoutArchive(ctx, img, archive, repo+":"+short(s.head.Hash.String())); err != nil {
		return stageFromErr(err)
	}
	in := s.in.Smoke
	opts := smoke.Options{
		KubeconfigPath: in.KubeconfigPath, NodeImage: in.NodeImage, OLMManifestsDir: in.OLMManifestsDir,
		Keep: in.Keep, ImageArchives: in.ImageArchives,
		CatalogImage: repo + "@" + dig.String(), CatalogArchive: archive,
		Packages: pkgs, Timeout: s.cfg.Smoke.TimeoutDuration(), Progress: s.stageWriter("smoke"),
	}
	if in.KubeconfigPath == "" && in.NodeImage == "" && len(in.NodeImages) > 0 {
		img, err := nodeImageFor(in.NodeImages, minKubeVersion(s.changes.head, pkgs))
		if err != nil {
			return stageFromErr(err)
		}
		opts.NodeImage = img
	}
	if in.KubeconfigPath == "" {
		opts.CreateCluster = true
		opts.ClusterName = "catalogbot-" + short(s.head.Hash.String())
	}
	start := time.Now()
	res, err := smoke.Run(ctx, opts)
	ds := res.Diagnostics
	ok := 0
	for _, p := range res.Packages {
		ds = append(ds, p.Diagnostics...)
		if p.Succeeded {
			ok++
		}
	}
	st := stageFromDiags(fmt.Sprintf("%d of %d changed packages reached CSV Succeeded (%s)", ok, len(pkgs), time.Since(start).Round(time.Second)), ds)
	if err != nil {
		e := stageFromErr(err)
		st.Status = e.Status
		if e.Status != report.Fail {
			st.Err = e.Err
		}
	}
	return st
}

// minKubeVersion is the highest minKubeVersion among the bundles of the given packages ("" when none
// says one; only csv-metadata properties carry it).
func minKubeVersion(c *catalog.Catalog, pkgs []string) string {
	want := map[string]bool{}
	for _, p := range pkgs {
		want[p] = true
	}
	var best semver.Version
	found := ""
	for _, b := range c.Bundles {
		if !want[b.Package] || b.Parsed == nil || b.Parsed.CSVMetadata == nil {
			continue
		}
		v, err := semver.ParseTolerant(b.Parsed.CSVMetadata.MinKubeVersion)
		if err == nil && (found == "" || v.GT(best)) {
			best, found = v, b.Parsed.CSVMetadata.MinKubeVersion
		}
	}
	return found
}

// nodeImageFor picks the node image of the oldest Kubernetes version at or above min (any version when
// min is empty: the oldest).
func nodeImageFor(images map[string]string, min string) (string, error) {
	type cand struct {
		v     semver.Version
		image string
	}
	var cands []cand
	for k, img := range images {
		v, err := semver.ParseTolerant(k)
		if err != nil {
			return "", diag.UsageError(fmt.Errorf("smoke node image for %q: not a Kubernetes version", k))
		}
		cands = append(cands, cand{v, img})
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].v.LT(cands[j].v) })
	var need semver.Version
	if min != "" {
		var err error
		if need, err = semver.ParseTolerant(min); err != nil {
			return "", diag.InvalidError(fmt.Errorf("minKubeVersion %q is not a version", min))
		}
	}
	for _, c := range cands {
		if c.v.GTE(need) {
			return c.image, nil
		}
	}
	return "", diag.UsageError(fmt.Errorf("no configured kind node image runs Kubernetes %s or newer (minKubeVersion of a changed bundle); configured: %d", min, len(cands)))
}
