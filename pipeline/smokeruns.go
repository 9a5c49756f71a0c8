package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// The smoke stage of a template-driven repository (catalogs: in the base configuration): every catalog
// whose committed content of a package changed is smoke-installed on a kind cluster of its own cluster
// version's Kubernetes (node image by version, smokeNodeImage), its changed packages from the base's
// catalog image then the head's, exactly as a single catalog's are. Only one kind cluster exists at a
// time: the catalogs run one after the other in version order, each cluster deleted before the next is
// created, each run bounded by an equal share of what is left of the stage's deadline (a run that
// finishes early leaves its time to the next ones; one that hangs cannot starve them).
//
// Sharing: two catalogs are installed in one run only when that run is provably the same install for
// both: the same node image, the same base and head catalog images by digest (the catalog image build is
// reproducible, so equal digests mean equal catalog content, and different content never shares), and
// the same packages, installed from the base or fresh, expected at the same CSVs. Anything else runs
// separately. In community-operators' layout catalogs hold different package sets, so sharing is rare;
// it is there so that a repository mapping several cluster versions to one node image does not pay the
// same cluster twice.
//
// A cluster is never reused for another install, even of the same node image: what one catalog's
// install leaves behind (cluster-scoped CRDs, namespaces still terminating) could make the next one pass
// (a package needing a CRD nobody provides) or fail, so each install gets the fresh cluster a subscribed
// cluster of that version would be.
//
// Which catalogs: smoke.clusterVersions of the base branch's configuration (never the pull request's:
// a change cannot narrow its own smoke install) limits them; an affected catalog outside the limit is
// named in the summary and in one warning, and when the limit leaves no affected catalog the stage is
// skipped with that warning: the maintainers chose on the base branch not to pay for those clusters.
// The limit narrows only catalogs the base has: a catalog directory the pull request adds (a pattern's
// new version) is installed whatever the limit says, as the base's maintainers cannot have chosen to
// leave out what did not exist, and a contributor must not dodge the install by putting a package in a
// catalog of a new name.
// A catalog that needs a cluster and has no node image for its Kubernetes version is a usage error
// naming the catalog and the version, before any cluster is created; never a skip.

// catalogRun is one smoke install: one catalog, or several that provably share it.
type catalogRun struct {
	cats      []config.Catalog
	plan      smoke.Plan
	nodeImage string
	// olms are the OLMs the catalogs are installed with, one install (and cluster) each, in order:
	// ["v0"], ["v1"] or ["v0", "v1"] (config.SmokeConfig.OLMsFor, or the front-end's choice).
	olms []string
	// base and head catalog images by digest, and their archives for the kind nodes
	baseRef, baseArchive, headRef, headArchive string
	// basePushed and headPushed are the same images by digest in the push target (SmokeInput.Registry),
	// for OLM v1, whose catalogd pulls them itself; empty when the run has no OLM v1 install.
	basePushed, headPushed string
}

func (r *catalogRun) names() []string {
	out := make([]string, len(r.cats))
	for i, c := range r.cats {
		out[i] = c.Name
	}
	return out
}

// kubernetes names the Kubernetes versions of the run's catalogs ("unknown" for a catalog without a
// cluster version).
func (r *catalogRun) kubernetes() string {
	var vs []string
	for _, c := range r.cats {
		v := c.Kubernetes
		if v == "" {
			v = "unknown"
		}
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return strings.Join(vs, ", ")
}

// key is equal for runs that are the same install.
func (r *catalogRun) key() string {
	return strings.Join([]string{r.nodeImage, r.baseRef, r.headRef, strings.Join(r.plan.Packages, ","),
		strings.Join(r.plan.FromBase, ","), fmt.Sprint(r.plan.Expect), strings.Join(r.olms, ",")}, "\x00")
}

// buildRunImages builds each run's head (and, when it installs from the base, base) catalog image, then
// merges runs that are the same install (catalogRun.key).
func (s *state) buildRunImages(ctx context.Context, runs []*catalogRun, tmp string) ([]*catalogRun, error) {
	var baseDir string
	for i, r := range runs {
		cat := r.cats[0]
		// one directory per run for the archives; the image names are the same for every run, so that
		// equal content has equal references (catalogRun.key)
		dir := filepath.Join(tmp, fmt.Sprint(i+1))
		if err := os.Mkdir(dir, 0o700); err != nil {
			return nil, err
		}
		push := slices.Contains(r.olms, config.SmokeOLMv1) // checkPushTarget made sure there is a target
		var err error
		if r.headRef, r.headArchive, r.headPushed, err = s.smokeCatalog(ctx, filepath.Join(s.headDir, filepath.FromSlash(cat.Dir)), "head", dir, push); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", cat.Name, err)
		}
		if len(r.plan.FromBase) == 0 {
			continue
		}
		if baseDir == "" {
			dir, cleanup, err := s.in.Repo.Checkout(ctx, s.base)
			if err != nil {
				return nil, err
			}
			defer cleanup()
			baseDir = dir
		}
		if r.baseRef, r.baseArchive, r.basePushed, err = s.smokeCatalog(ctx, filepath.Join(baseDir, filepath.FromSlash(cat.Dir)), "base", dir, push); err != nil {
			return nil, fmt.Errorf("catalog %s: %w", cat.Name, err)
		}
	}
	var out []*catalogRun
	byKey := map[string]*catalogRun{}
	for _, r := range runs {
		if same, ok := byKey[r.key()]; ok {
			same.cats = append(same.cats, r.cats...)
			continue
		}
		byKey[r.key()] = r
		out = append(out, r)
	}
	return out, nil
}

// smokeJob is one call of the smoke runner: a run's catalogs installed with one OLM.
type smokeJob struct {
	r   *catalogRun
	olm string
}

// runCatalogs runs the installs one after the other (one kind cluster at a time), each run once per OLM
// it is installed with, and makes the stage: a line per run and OLM, diagnostics prefixed with the
// catalogs (and, when OLM v1 is in the stage, the OLM) they are about.
func (s *state) runCatalogs(ctx context.Context, runs []*catalogRun, excluded, order []string, ds []diag.Diagnostic) report.Stage {
	var jobs []smokeJob
	anyV1 := false
	for _, r := range runs {
		for _, o := range r.olms {
			jobs = append(jobs, smokeJob{r: r, olm: o})
			anyV1 = anyV1 || o == config.SmokeOLMv1
		}
	}
	in := s.in.Smoke
	runner := in.Run
	if runner == nil {
		runner = smoke.Run
	}
	status := report.Pass
	var errs []string
	var lines strings.Builder
	var failed []string
	installs, succeeded, fromBase, upgraded := 0, 0, 0, 0
	leftover := ""                 // the catalogs whose cluster could not be deleted: no other is created
	refused := map[string]string{} // per OLM, the catalogs whose install refused the settings: no other is tried
	progress := s.stageWriter("smoke")
	if progress == nil {
		progress = io.Discard
	}
	start := time.Now()
	one := len(order) == 1 // a layout of one catalog names no catalog
	var plain []string     // the errors as a layout of one catalog says them
	for i, job := range jobs {
		r := job.r
		names := r.names()
		span := template.CatalogSpan(names, order)
		kube := r.kubernetes()
		// with OLM v1 in the stage every line, error and diagnostic says its OLM
		label, prefix, olmTag := span, span+": ", ""
		if anyV1 {
			label, olmTag = span+" (OLM "+job.olm+")", "OLM "+job.olm+", "
			prefix = label + ": "
			if one {
				prefix = "OLM " + job.olm + ": "
			}
		}
		why := ""
		switch {
		case ctx.Err() != nil:
			why = context.Cause(ctx).Error() // cancelled or out of time before this run
		case leftover != "":
			why = "the cluster of " + leftover + " could not be deleted, and only one kind cluster may exist at a time"
		case refused[job.olm] != "":
			why = "the smoke settings were refused for " + refused[job.olm] + " (see there), and would be for it too"
		}
		if why != "" {
			failed = append(failed, names...)
			status = report.Worse(status, report.Error)
			errs = append(errs, fmt.Sprintf("%s: not run: %s", label, why))
			fmt.Fprintf(&lines, "- %s (%sKubernetes %s, node image %s): not run: %s\n", span, olmTag, kube, nodeImageLabel(r.nodeImage), why)
			continue
		}
		rctx, cancel := ctx, context.CancelFunc(func() {})
		var share time.Duration
		if deadline, ok := ctx.Deadline(); ok {
			share = time.Until(deadline) / time.Duration(len(jobs)-i)
			rctx, cancel = context.WithTimeout(ctx, share)
		}
		opts := smoke.Options{
			NodeImage: r.nodeImage, KindConfig: in.KindConfig, OLMManifestsDir: in.OLMManifestsDir,
			Keep: in.Keep, ImageArchives: in.ImageArchives, CreateCluster: true,
			ClusterName:  smokeClusterName(s.head.Hash.String(), i, names[0]),
			CatalogImage: r.headRef, CatalogArchive: r.headArchive,
			BaseCatalogImage: r.baseRef, BaseCatalogArchive: r.baseArchive, FromBase: r.plan.FromBase,
			Packages: r.plan.Packages, Expect: r.plan.Expect, BundleImages: r.plan.BundleImages,
			Timeout: s.cfg.Smoke.TimeoutDuration(), Progress: progress, PodSecurity: s.cfg.Smoke.PodSecurity,
		}
		if job.olm == config.SmokeOLMv1 {
			// catalogd and operator-controller pull the catalog images themselves: the references pushed
			// to the push target, no archives (see smoke.Options.OLM); the versions pin each
			// ClusterExtension to the bundles of the plan.
			opts.OLM, opts.OLMv1ManifestsDir = smoke.OLMv1, in.OLMv1ManifestsDir
			opts.CatalogImage, opts.BaseCatalogImage = r.headPushed, r.basePushed
			opts.CatalogArchive, opts.BaseCatalogArchive = "", ""
			opts.Versions, opts.BaseVersions = r.plan.Versions, r.plan.BaseVersions
		}
		if in.KubeconfigPath != "" || in.ClusterName != "" {
			// an existing cluster (the smoke stage allows one install on it), not deleted
			opts.KubeconfigPath, opts.ClusterName, opts.CreateCluster = in.KubeconfigPath, in.ClusterName, false
			if opts.ClusterName == "" {
				// a kubeconfig cluster cannot be given archives: its nodes pull the catalog themselves
				opts.CatalogArchive, opts.BaseCatalogArchive = "", ""
			}
		}
		if !one || anyV1 {
			fmt.Fprintf(progress, "smoke: %s (%sKubernetes %s) on a kind cluster with node image %s (%d of %d)\n", span, olmTag, kube, nodeImageLabel(r.nodeImage), i+1, len(jobs))
		}
		t0 := time.Now()
		res, err := runner(rctx, opts)
		if rctx.Err() != nil && ctx.Err() == nil {
			err = diag.InfraError(errors.Join(fmt.Errorf("did not finish within its share (%s) of the smoke stage's deadline (an infrastructure failure, not this change's: give the stage more time, e.g. catalogbot pr --stage-timeout, or limit smoke.clusterVersions)", share.Round(time.Second)), err))
		}
		cancel()
		if errors.Is(err, smoke.ErrClusterNotDeleted) {
			leftover = span
		}
		if err != nil && diag.CategoryOf(err) == diag.Usage {
			refused[job.olm] = label // no OLM and no manifests to install it, say: every next cluster would repeat it
		}
		took := time.Since(t0).Round(time.Second)
		rds, ok, up := tally(res)
		for j := range rds {
			if !one || anyV1 {
				rds[j].Message = prefix + rds[j].Message
			}
		}
		ds = append(ds, rds...)
		installs += len(r.plan.Packages)
		succeeded += ok
		fromBase += len(r.plan.FromBase)
		upgraded += up
		runStatus := report.StatusOf(rds, nil)
		if err != nil {
			runStatus = report.StatusOf(nil, err)
			if runStatus != report.Fail {
				errs = append(errs, fmt.Sprintf("%s (%sKubernetes %s): %v", span, olmTag, kube, err))
				plain = append(plain, err.Error())
			}
		}
		status = report.Worse(status, runStatus)
		result := "passed"
		if runStatus != report.Pass {
			result = map[report.Status]string{report.Fail: "FAILED", report.Error: "ERROR (infrastructure)", report.ActionRequired: "ACTION REQUIRED"}[runStatus]
			failed = append(failed, names...)
		}
		line := fmt.Sprintf("%d of %d installed (%s)", ok, len(r.plan.Packages), strings.Join(r.plan.Packages, ", "))
		if len(r.plan.FromBase) > 0 {
			line += fmt.Sprintf(", %d of %d upgraded from the base catalog", up, len(r.plan.FromBase))
		}
		shared := ""
		if len(names) > 1 {
			shared = ", one install: the same node image, catalog images and packages"
		}
		fmt.Fprintf(&lines, "- %s (%sKubernetes %s, node image %s%s): %s, %s in %s\n", span, olmTag, kube, nodeImageLabel(r.nodeImage), shared, result, line, took)
	}
	if len(excluded) > 0 {
		fmt.Fprintf(&lines, "- %s: not installed (outside smoke.clusterVersions)\n", template.CatalogSpan(excluded, order))
	}
	if one && len(plain) == len(errs) && !anyV1 {
		sum := fmt.Sprintf("%d of %d changed packages reached CSV Succeeded", succeeded, installs)
		if fromBase > 0 {
			sum += fmt.Sprintf(", %d of %d upgraded from the base catalog", upgraded, fromBase)
		}
		st := report.Stage{Status: status, Summary: fmt.Sprintf("%s (%s)", sum, time.Since(start).Round(time.Second)), Diagnostics: ds}
		if len(plain) > 0 && status != report.Fail {
			st.Err = strings.Join(plain, "; ")
		}
		return st
	}
	catalogs := 0
	for _, r := range runs {
		catalogs += len(r.cats)
	}
	reached := "reached CSV Succeeded"
	if anyV1 {
		reached = "succeeded (OLM v0: CSV Succeeded; OLM v1: Installed and its Deployments Available)"
	}
	sum := fmt.Sprintf("%s smoke-installed in %s one after the other: %d of %d package installs %s",
		plural(catalogs, "catalog"), plural(len(jobs), "kind cluster"), succeeded, installs, reached)
	if fromBase > 0 {
		sum += fmt.Sprintf(", %d of %d upgraded from the base catalog", upgraded, fromBase)
	}
	if len(failed) > 0 {
		sum += "; failed: " + template.CatalogSpan(failed, order)
	}
	if len(excluded) > 0 {
		sum += "; not installed (smoke.clusterVersions): " + template.CatalogSpan(excluded, order)
	}
	sum += fmt.Sprintf(" (%s)", time.Since(start).Round(time.Second))
	st := report.Stage{Status: status, Summary: sum, Diagnostics: ds, Details: "#### Catalogs\n\n" + lines.String()}
	if len(errs) > 0 && status != report.Fail {
		st.Err = strings.Join(errs, "; ")
	}
	return st
}

// changedPackagesByCatalog lists, per catalog, the packages whose committed files under the catalog's
// directory the change touched, by blob identity (Attribute; the drift gate holds a template-driven
// catalog equal to its templates' render), sorted.
func (s *state) changedPackagesByCatalog(ctx context.Context) (map[string][]string, error) {
	at, err := s.attribution(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for pkg, files := range at.Packages {
		for _, f := range files {
			if c, _, ok := s.layout.CatalogOf(f); ok && !slices.Contains(out[c.Name], pkg) {
				out[c.Name] = append(out[c.Name], pkg)
			}
		}
	}
	for _, pkgs := range out {
		slices.Sort(pkgs)
	}
	return out, nil
}

// unknownClusterVersions warns about smoke.clusterVersions entries that name no configured catalog (a
// typo smokes nothing for that version).
func (s *state) unknownClusterVersions(cats []config.Catalog) []diag.Diagnostic {
	var ds []diag.Diagnostic
	for _, v := range s.cfg.Smoke.ClusterVersions {
		known := false
		for _, c := range cats {
			if (config.SmokeConfig{ClusterVersions: []string{v}}).SmokesCatalog(c) {
				known = true
				break
			}
		}
		if !known {
			ds = append(ds, diag.Diagnostic{Severity: diag.Warning, Check: "smoke", Rule: "smoke-unknown-cluster-version", File: config.ConfigFile,
				Message: fmt.Sprintf("smoke.clusterVersions names %q, which is no configured catalog", v)})
		}
	}
	return ds
}

// smokeClusterName names run i's kind cluster after the head commit and its (first) catalog, in kind's
// alphabet; the index keeps names distinct whatever the catalogs are called.
func smokeClusterName(head string, i int, catalog string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(catalog) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
		if b.Len() == 16 {
			break
		}
	}
	return fmt.Sprintf("catalogbot-%s-%d-%s", short(head), i+1, strings.Trim(b.String(), "-"))
}

func runNames(runs []*catalogRun) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.names()...)
	}
	return out
}

func nodeImageLabel(img string) string {
	if img == "" {
		return "(kind's default)"
	}
	return img
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func itThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
