package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
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
	// ClusterName reuses this existing kind cluster (archives can be loaded into it); it is not deleted.
	ClusterName string
	// ImageArchives are loaded into kind nodes besides the catalog (bundle and operator images for
	// clusters that cannot pull them).
	ImageArchives []string
	Keep          bool
	// Slots, when set, bounds the smoke installs running at once: a run holds one slot (a buffered
	// channel's capacity) while it uses a cluster. A front-end running several checks at once (the bot)
	// shares one between them.
	Slots chan struct{}
	// KindConfig is a raw kind Cluster config (YAML) for the clusters the stage creates (e.g. no
	// default CNI, for node images that bring their own); empty: one control-plane node.
	KindConfig string
	// Run runs one smoke install; nil is smoke.Run (tests give a hand-written fake).
	Run SmokeRunner
	// OLM, when set ("v0", "v1" or "both"), is the OLM every catalog is installed with, in place of the
	// base configuration's smoke.olm and smoke.olmByCatalog: the front-end's choice (--olm, the Action's
	// olm input, bot.yaml's smoke.olm).
	OLM string
	// OLMv1ManifestsDir installs OLM v1 in a cluster that lacks it (smoke.Options.OLMv1ManifestsDir).
	OLMv1ManifestsDir string
	// Registry is where the stage pushes the catalog images an OLM v1 install serves: a repository
	// prefix the cluster's catalogd can pull from ("localhost:5001/catalogbot-smoke" for kind's local
	// registry, or a CI registry). The images go to REGISTRY/catalog-{base,head} by digest, with the
	// run's registry credentials (RemoteOptions). It is the operator's setting (--smoke-registry, the
	// Action's smoke-registry, bot.yaml's smoke.registry), never the repository's: a pull request does
	// not choose where its images are pushed. OLM v1 without it is a usage error before anything is
	// built (catalogd cannot pull the locally built images, and the install would only time out).
	Registry string
}

// CheckSmokeRegistry reports whether prefix is a push target for the smoke catalog images
// (SmokeInput.Registry): a repository prefix with an explicit registry host, such as
// localhost:5001/catalogbot-smoke. Front-ends check their setting with it when they start.
func CheckSmokeRegistry(prefix string) error {
	_, err := smokeRepository(prefix, "head")
	return err
}

// smokeRepository is the repository of the catalog image which ("base" or "head") under the push
// target prefix; a prefix that does not make a repository name is a usage error naming the setting.
func smokeRepository(prefix, which string) (name.Repository, error) {
	p := strings.TrimSuffix(prefix, "/")
	repo, err := name.NewRepository(p+"/catalog-"+which, name.StrictValidation)
	if err != nil || strings.ContainsAny(p, "@") {
		return name.Repository{}, diag.UsageError(fmt.Errorf("smoke registry %q is not a repository prefix (such as localhost:5001/catalogbot-smoke): %v", prefix, err))
	}
	return repo, nil
}

// olmsFor is the OLMs the catalog cat is installed with: the front-end's choice when it made one, else
// the base configuration's.
func (in *SmokeInput) olmsFor(cfg config.SmokeConfig, cat config.Catalog) []string {
	if in.OLM != "" {
		return config.SmokeConfig{OLM: in.OLM}.OLMsFor(config.Catalog{})
	}
	return cfg.OLMsFor(cat)
}

// acquire waits for one of in's slots; release gives it back.
func (in *SmokeInput) acquire(ctx context.Context, progress func(string)) (release func(), err error) {
	if in.Slots == nil {
		return func() {}, nil
	}
	select {
	case in.Slots <- struct{}{}:
		return func() { <-in.Slots }, nil
	default:
	}
	progress("waiting for another check's smoke install to finish")
	select {
	case in.Slots <- struct{}{}:
		return func() { <-in.Slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for a smoke cluster slot: %w", context.Cause(ctx))
	}
}

// SmokeRunner runs one smoke install, as smoke.Run does: it creates the cluster when asked and deletes
// it before returning (also on failure and cancellation) unless Keep.
type SmokeRunner func(ctx context.Context, opts smoke.Options) (smoke.Result, error)

// smoke builds the head's catalog image of every catalog whose committed content of a package changed,
// for this machine's platform, loads it into a kind cluster by digest, and installs every changed package
// that is in the head catalog (smokeruns.go, smokejobs.go). A package the base catalog already offers on
// the same channel is installed from the base's catalog image first, then the CatalogSource is pointed at
// the head's and the package must upgrade to the head's channel head: what clusters subscribed to the
// catalog will do after the merge. An existing cluster (--smoke-kubeconfig, --smoke-kind-cluster) takes one
// install of a catalog without a cluster version.
func (s *state) smoke(ctx context.Context) report.Stage {
	if !s.cfg.Smoke.Enabled {
		return report.Stage{Status: report.Skipped, Summary: "smoke install is disabled (smoke.enabled in " + config.ConfigFile + ")"}
	}
	in := s.in.Smoke
	if in == nil {
		return stageFromErr(diag.UsageError(fmt.Errorf("smoke.enabled is set in %s, but this run has no cluster settings (catalogbot pr --smoke-node-image, --smoke-kind-cluster or --smoke-kubeconfig, or the smoke section of the bot's configuration, bot.yaml)", config.ConfigFile)))
	}
	if in.OLM != "" && !slices.Contains(config.SmokeOLMs, in.OLM) {
		return stageFromErr(diag.UsageError(fmt.Errorf("smoke OLM %q is not one of %s", in.OLM, strings.Join(config.SmokeOLMs, ", "))))
	}
	existing := in.KubeconfigPath != "" || in.ClusterName != ""
	refuseExisting := stageFromErr(diag.UsageError(fmt.Errorf("in a repository with catalogs: in %s the smoke stage creates one kind cluster per cluster version: give kind node images by Kubernetes version (--smoke-node-images 1.33=IMAGE,...) instead of an existing cluster (--smoke-kubeconfig, --smoke-kind-cluster)", config.ConfigFile)))
	pairs, a, err := s.catalogPairs(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	order := make([]string, 0, len(a.catalogs))
	for _, c := range a.catalogs {
		order = append(order, c.Name)
		if existing && c.Kubernetes != "" {
			return refuseExisting
		}
	}
	changed, err := s.changedPackagesByCatalog(ctx)
	if err != nil {
		return stageFromErr(err)
	}
	var runs []*catalogRun
	var excluded []string
	var usage []error
	for _, p := range pairs {
		pkgs := changed[p.cat.Name]
		if len(pkgs) == 0 {
			continue
		}
		plan := smoke.PlanChange(p.base, p.head, pkgs, nil)
		if len(plan.Packages) == 0 {
			continue // only removed packages: nothing to install
		}
		if !s.cfg.Smoke.SmokesCatalog(p.cat) {
			atBase, err := catalogAt(s.base, p.cat)
			if err != nil {
				return stageFromErr(err)
			}
			if atBase { // a catalog directory the change adds is smoked anyway
				excluded = append(excluded, p.cat.Name)
				continue
			}
		}
		img := ""
		if !existing {
			if img, err = smokeNodeImage(in, p.cat, p.head, plan.Packages); err != nil {
				usage = append(usage, err)
				continue
			}
		}
		runs = append(runs, &catalogRun{cats: []config.Catalog{p.cat}, plan: plan, nodeImage: img, olms: in.olmsFor(s.cfg.Smoke, p.cat)})
	}
	if existing && len(runs) > 1 {
		return refuseExisting
	}
	if err := in.checkPushTarget(runs, order); err != nil {
		return stageFromErr(err)
	}
	var ds []diag.Diagnostic
	if len(excluded) > 0 {
		ds = append(ds, diag.Diagnostic{Severity: diag.Warning, Check: "smoke", Rule: "smoke-catalog-not-installed", File: config.ConfigFile,
			Message: fmt.Sprintf("%s changed but %s not smoke-installed: smoke.clusterVersions (%s) of the base branch's %s leaves %s out",
				template.CatalogSpan(excluded, order), isAre(len(excluded)), strings.Join(s.cfg.Smoke.ClusterVersions, ", "), config.ConfigFile, itThem(len(excluded)))})
	}
	ds = append(ds, s.unknownClusterVersions(a.catalogs)...)
	if err := errors.Join(usage...); err != nil {
		if len(order) == 1 {
			return stageFromErr(err) // a layout of one catalog: its one install
		}
		st := stageFromErr(diag.UsageError(fmt.Errorf("nothing was installed: %w", err)))
		st.Diagnostics = ds
		return st
	}
	if len(runs) == 0 {
		sum := "no changed package to install in any catalog"
		switch {
		case len(excluded) > 0:
			sum = fmt.Sprintf("no catalog installed: the changed %s outside smoke.clusterVersions (%s)", template.CatalogSpan(excluded, order)+" "+isAre(len(excluded)), strings.Join(s.cfg.Smoke.ClusterVersions, ", "))
		case len(order) == 1:
			sum = "no changed package to install"
		}
		return report.Stage{Status: report.Skipped, Summary: sum, Diagnostics: ds}
	}
	tmp, err := os.MkdirTemp("", "catalogbot-smoke-")
	if err != nil {
		return stageFromErr(err)
	}
	defer os.RemoveAll(tmp)
	runs, err = s.buildRunImages(ctx, runs, tmp)
	if err != nil {
		return stageFromErr(err)
	}
	if in.Keep && len(runs) > 1 {
		return stageFromErr(diag.UsageError(fmt.Errorf("--smoke-keep keeps each cluster, and only one kind cluster may exist at a time: %d clusters would be needed here (%s); run without it, or limit smoke.clusterVersions", len(runs), template.CatalogSpan(runNames(runs), order))))
	}
	// The whole sequence holds one slot: a front-end running several checks at once never has two of
	// them creating clusters together beyond its limit.
	release, err := in.acquire(ctx, func(line string) { fmt.Fprintln(s.stageWriter("smoke"), line) })
	if err != nil {
		return stageFromErr(err)
	}
	defer release()
	return s.runCatalogs(ctx, runs, excluded, order, ds)
}

// checkPushTarget refuses, before any image is built or cluster created, an OLM v1 install without a
// push target (Registry) or with one that is no repository prefix.
func (in *SmokeInput) checkPushTarget(runs []*catalogRun, order []string) error {
	var v1 []string
	for _, r := range runs {
		if slices.Contains(r.olms, config.SmokeOLMv1) {
			v1 = append(v1, r.names()...)
		}
	}
	if len(v1) == 0 {
		return nil
	}
	if in.Registry == "" {
		return diag.UsageError(fmt.Errorf("OLM v1 smoke installs (%s) need a registry the cluster can pull the catalog images from, as catalogd pulls them itself: set one (catalogbot pr --smoke-registry localhost:5001/catalogbot-smoke, the Action's smoke-registry input, or smoke.registry in bot.yaml)", template.CatalogSpan(v1, order)))
	}
	return CheckSmokeRegistry(in.Registry)
}

// smokeCatalog builds the catalog directory dir (of a checkout) for this machine's platform and writes
// it as an archive for the kind nodes; it returns the image by digest and the archive. With push it
// also pushes the image by digest to the push target (SmokeInput.Registry) and returns that reference.
func (s *state) smokeCatalog(ctx context.Context, dir, which, tmp string, push bool) (ref, archive, pushed string, err error) {
	bopts := build.Options{
		Base:      s.cfg.Publish.Base,
		Platforms: []v1.Platform{{OS: "linux", Architecture: runtime.GOARCH}},
		// The run's registry options (in the bot: its repository's credentials only).
		RemoteOptions: s.in.RemoteOptions,
	}
	img, err := build.Image(ctx, dir, bopts)
	if err != nil {
		return "", "", "", fmt.Errorf("%s catalog: %w", which, err)
	}
	dig, err := img.Digest()
	if err != nil {
		return "", "", "", fmt.Errorf("%s catalog: %w", which, err)
	}
	repo := "catalogbot.local/smoke/catalog-" + which
	archive = filepath.Join(tmp, which+".tar")
	if err := build.WriteLayoutArchive(ctx, img, archive, repo+":"+short(s.head.Hash.String())); err != nil {
		return "", "", "", fmt.Errorf("%s catalog: %w", which, err)
	}
	if push {
		target, err := smokeRepository(s.in.Smoke.Registry, which)
		if err != nil {
			return "", "", "", err
		}
		d, err := build.Push(ctx, img, target.Digest(dig.String()), bopts)
		if err != nil {
			return "", "", "", fmt.Errorf("%s catalog: push to the smoke registry (for OLM v1): %w", which, err)
		}
		pushed = d.String()
	}
	return repo + "@" + dig.String(), archive, pushed, nil
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

// smokeNodeImage chooses the kind node image a catalog of a template-driven repository is installed on.
// A catalog with a cluster version (OpenShift 4.Y, or kubernetes: in catalogs.list) needs a node image of
// its Kubernetes minor version: the newest patch among --smoke-node-images (keys such as 1.33 or
// v1.33.13) and --smoke-node-image when its tag says its version (kindest/node:v1.33.1); none is a usage
// error naming the catalog and the version. A catalog without a cluster version gets what a single
// catalog gets: --smoke-node-image, else the oldest node image satisfying the changed bundles'
// minKubeVersion (nodeImageFor), else kind's default.
func smokeNodeImage(in *SmokeInput, cat config.Catalog, head *catalog.Catalog, pkgs []string) (string, error) {
	if cat.Kubernetes == "" {
		if in.NodeImage == "" && len(in.NodeImages) > 0 {
			return nodeImageFor(in.NodeImages, minKubeVersion(head, pkgs))
		}
		return in.NodeImage, nil
	}
	want, err := semver.ParseTolerant(cat.Kubernetes)
	if err != nil {
		return "", diag.UsageError(fmt.Errorf("catalog %s: Kubernetes version %q is not a version", cat.Name, cat.Kubernetes))
	}
	type cand struct {
		v     semver.Version
		image string
	}
	var cands []cand
	for k, img := range in.NodeImages {
		v, err := semver.ParseTolerant(k)
		if err != nil {
			return "", diag.UsageError(fmt.Errorf("smoke node image for %q: not a Kubernetes version", k))
		}
		cands = append(cands, cand{v, img})
	}
	if in.NodeImage != "" {
		if v, ok := nodeImageVersion(in.NodeImage); ok {
			cands = append(cands, cand{v, in.NodeImage})
		}
	}
	best, found := cand{}, false
	for _, c := range cands {
		if c.v.Major == want.Major && c.v.Minor == want.Minor && (!found || c.v.GT(best.v) || c.v.EQ(best.v) && c.image < best.image) {
			best, found = c, true
		}
	}
	if !found {
		what := "OpenShift " + cat.OpenShift + ", "
		if cat.OpenShift == "" {
			what = ""
		}
		return "", diag.UsageError(fmt.Errorf("catalog %s (%sKubernetes %d.%d) has no kind node image: give one with --smoke-node-images %d.%d=IMAGE (configured: %s)",
			cat.Name, what, want.Major, want.Minor, want.Major, want.Minor, configuredNodeImages(in)))
	}
	return best.image, nil
}

// nodeImageVersion reads the Kubernetes version from a node image's tag (kindest/node:v1.33.1).
func nodeImageVersion(image string) (semver.Version, bool) {
	ref := image
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	i := strings.LastIndex(ref, ":")
	if i < 0 || i < strings.LastIndex(ref, "/") || !strings.HasPrefix(ref[i+1:], "v") {
		return semver.Version{}, false
	}
	v, err := semver.Parse(ref[i+2:])
	return v, err == nil
}

// configuredNodeImages lists the node images given, for errors.
func configuredNodeImages(in *SmokeInput) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(in.NodeImages)) {
		parts = append(parts, k+"="+in.NodeImages[k])
	}
	if in.NodeImage != "" {
		if _, ok := nodeImageVersion(in.NodeImage); ok {
			parts = append(parts, in.NodeImage)
		} else {
			parts = append(parts, in.NodeImage+" (its tag does not say its Kubernetes version)")
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// tally is a smoke run's diagnostics (the run's, then each package's), the packages whose CSV
// succeeded, and of those the ones upgraded from the base catalog.
func tally(res smoke.Result) (ds []diag.Diagnostic, succeeded, upgraded int) {
	ds = append(ds, res.Diagnostics...)
	for _, p := range res.Packages {
		ds = append(ds, p.Diagnostics...)
		if p.Succeeded {
			succeeded++
			if p.FromBase {
				upgraded++
			}
		}
	}
	return ds, succeeded, upgraded
}
