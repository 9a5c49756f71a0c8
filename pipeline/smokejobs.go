package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// The smoke stage's installs, one kind cluster at a time (smokeruns.go says which runs there are): each
// job is run or, when an earlier one rules it out, reported not run; its result is added to the stage.

// smokeJob is one call of the smoke runner: a run's catalogs installed with one OLM.
type smokeJob struct {
	r   *catalogRun
	olm string
}

// runCatalogs runs the installs one after the other (one kind cluster at a time), each run once per OLM
// it is installed with, and makes the stage: a line per run and OLM, diagnostics prefixed with the
// catalogs (and, when OLM v1 is in the stage, the OLM) they are about.
func (s *state) runCatalogs(ctx context.Context, runs []*catalogRun, excluded, order []string, ds []diag.Diagnostic) report.Stage {
	sr := s.newSmokeRound(runs, excluded, order, ds)
	for i, job := range sr.jobs {
		sr.runJob(ctx, i, job)
	}
	return sr.stage()
}

// smokeRound is the smoke stage's pass over its jobs: what every job is run with, what the jobs so far
// rule out for the next ones, and what their results add up to.
type smokeRound struct {
	s               *state
	runs            []*catalogRun
	excluded, order []string
	jobs            []smokeJob
	anyV1           bool // OLM v1 is in the stage: every line, error and diagnostic says its OLM
	one             bool // a layout of one catalog names no catalog
	runner          SmokeRunner
	progress        io.Writer
	start           time.Time

	status                                  report.Status
	ds                                      []diag.Diagnostic
	lines                                   strings.Builder // a line per job, for the details
	errs                                    []string
	plain                                   []string // the errors as a layout of one catalog says them
	failed                                  []string // the catalogs of the jobs that did not pass
	installs, succeeded, fromBase, upgraded int
	leftover                                string            // the catalogs whose cluster could not be deleted: no other is created
	refused                                 map[string]string // per OLM, the catalogs whose install refused the settings: no other is tried
}

// newSmokeRound lists the jobs (each run once per OLM, in order) and what every job is run with; ds are
// the stage's diagnostics so far.
func (s *state) newSmokeRound(runs []*catalogRun, excluded, order []string, ds []diag.Diagnostic) *smokeRound {
	sr := &smokeRound{s: s, runs: runs, excluded: excluded, order: order, ds: ds, status: report.Pass, refused: map[string]string{}}
	for _, r := range runs {
		for _, o := range r.olms {
			sr.jobs = append(sr.jobs, smokeJob{r: r, olm: o})
			sr.anyV1 = sr.anyV1 || o == config.SmokeOLMv1
		}
	}
	sr.runner = s.in.Smoke.Run
	if sr.runner == nil {
		sr.runner = smoke.Run
	}
	sr.progress = s.stageWriter("smoke")
	if sr.progress == nil {
		sr.progress = io.Discard
	}
	sr.start = time.Now()
	sr.one = len(order) == 1
	return sr
}

// jobNames are the ways a job's line, errors and diagnostics name it.
type jobNames struct {
	names      []string // its catalogs
	span, kube string   // its catalogs as a span of the layout's order, and their Kubernetes versions
	label      string   // the job in errors: its span, and its OLM when OLM v1 is in the stage
	prefix     string   // before its diagnostics' messages
	olmTag     string   // "OLM v1, " before its Kubernetes versions when OLM v1 is in the stage
}

// namesOf is how job's line, errors and diagnostics name it.
func (sr *smokeRound) namesOf(job smokeJob) jobNames {
	n := jobNames{names: job.r.names()}
	n.span, n.kube = template.CatalogSpan(n.names, sr.order), job.r.kubernetes()
	// with OLM v1 in the stage every line, error and diagnostic says its OLM
	n.label, n.prefix = n.span, n.span+": "
	if sr.anyV1 {
		n.label, n.olmTag = n.span+" (OLM "+job.olm+")", "OLM "+job.olm+", "
		n.prefix = n.label + ": "
		if sr.one {
			n.prefix = "OLM " + job.olm + ": "
		}
	}
	return n
}

// runJob runs job, the i-th, and adds its result to the stage; a job that the context or an earlier job
// rules out is reported not run.
func (sr *smokeRound) runJob(ctx context.Context, i int, job smokeJob) {
	n := sr.namesOf(job)
	if why := sr.ruledOut(ctx, job); why != "" {
		sr.notRun(job, n, why)
		return
	}
	res, took, err := sr.install(ctx, i, job, n)
	sr.noteBlockers(job, n, err)
	sr.record(job, n, res, took, err)
}

// ruledOut says why job cannot run (empty when it can): the stage is cancelled or out of time, an earlier
// cluster is still there, or its OLM's settings were refused for an earlier job.
func (sr *smokeRound) ruledOut(ctx context.Context, job smokeJob) string {
	switch {
	case ctx.Err() != nil:
		return context.Cause(ctx).Error() // cancelled or out of time before this run
	case sr.leftover != "":
		return "the cluster of " + sr.leftover + " could not be deleted, and only one kind cluster may exist at a time"
	case sr.refused[job.olm] != "":
		return "the smoke settings were refused for " + sr.refused[job.olm] + " (see there), and would be for it too"
	}
	return ""
}

// notRun reports job not run, for the reason why: an error of the stage, and its catalogs failed.
func (sr *smokeRound) notRun(job smokeJob, n jobNames, why string) {
	sr.failed = append(sr.failed, n.names...)
	sr.status = report.Worse(sr.status, report.Error)
	sr.errs = append(sr.errs, fmt.Sprintf("%s: not run: %s", n.label, why))
	fmt.Fprintf(&sr.lines, "- %s (%sKubernetes %s, node image %s): not run: %s\n", n.span, n.olmTag, n.kube, nodeImageLabel(job.r.nodeImage), why)
}

// install runs job, the i-th, within an equal share of what is left of the stage's deadline (a run that
// does not finish within it is an infrastructure error), and says how long it took.
func (sr *smokeRound) install(ctx context.Context, i int, job smokeJob, n jobNames) (smoke.Result, time.Duration, error) {
	rctx, cancel := ctx, context.CancelFunc(func() {})
	var share time.Duration
	if deadline, ok := ctx.Deadline(); ok {
		share = time.Until(deadline) / time.Duration(len(sr.jobs)-i)
		rctx, cancel = context.WithTimeout(ctx, share)
	}
	opts := sr.options(i, job, n)
	if !sr.one || sr.anyV1 {
		fmt.Fprintf(sr.progress, "smoke: %s (%sKubernetes %s) on a kind cluster with node image %s (%d of %d)\n", n.span, n.olmTag, n.kube, nodeImageLabel(job.r.nodeImage), i+1, len(sr.jobs))
	}
	t0 := time.Now()
	res, err := sr.runner(rctx, opts)
	if rctx.Err() != nil && ctx.Err() == nil {
		err = diag.InfraError(errors.Join(fmt.Errorf("did not finish within its share (%s) of the smoke stage's deadline (an infrastructure failure, not this change's: give the stage more time, e.g. catalogbot pr --stage-timeout, or limit smoke.clusterVersions)", share.Round(time.Second)), err))
	}
	cancel()
	return res, time.Since(t0).Round(time.Second), err
}

// options are the smoke runner's options for job, the i-th: its node image, plan and catalog images
// (pushed references for OLM v1, archives for OLM v0), on a kind cluster of its own or on the existing
// cluster the front-end gave.
func (sr *smokeRound) options(i int, job smokeJob, n jobNames) smoke.Options {
	in, r, cfg := sr.s.in.Smoke, job.r, sr.s.cfg.Smoke
	opts := smoke.Options{
		NodeImage: r.nodeImage, KindConfig: in.KindConfig, OLMManifestsDir: in.OLMManifestsDir,
		Keep: in.Keep, ImageArchives: in.ImageArchives, CreateCluster: true,
		ClusterName:  smokeClusterName(sr.s.head.Hash.String(), i, n.names[0]),
		CatalogImage: r.headRef, CatalogArchive: r.headArchive,
		BaseCatalogImage: r.baseRef, BaseCatalogArchive: r.baseArchive, FromBase: r.plan.FromBase,
		Packages: r.plan.Packages, Expect: r.plan.Expect, BundleImages: r.plan.BundleImages,
		Timeout: cfg.TimeoutDuration(), Progress: sr.progress, PodSecurity: cfg.PodSecurity,
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
	return opts
}

// noteBlockers keeps what job's error rules out for the next jobs: a cluster that could not be deleted
// (no other is created), settings refused (no other install with its OLM is tried).
func (sr *smokeRound) noteBlockers(job smokeJob, n jobNames, err error) {
	if errors.Is(err, smoke.ErrClusterNotDeleted) {
		sr.leftover = n.span
	}
	if err != nil && diag.CategoryOf(err) == diag.Usage {
		sr.refused[job.olm] = n.label // no OLM and no manifests to install it, say: every next cluster would repeat it
	}
}

// record adds job's result to the stage: its diagnostics (prefixed with what it is when the stage names
// catalogs or OLMs), counts, status, error and line.
func (sr *smokeRound) record(job smokeJob, n jobNames, res smoke.Result, took time.Duration, err error) {
	r := job.r
	rds, ok, up := tally(res)
	for j := range rds {
		if !sr.one || sr.anyV1 {
			rds[j].Message = n.prefix + rds[j].Message
		}
	}
	sr.ds = append(sr.ds, rds...)
	sr.installs += len(r.plan.Packages)
	sr.succeeded += ok
	sr.fromBase += len(r.plan.FromBase)
	sr.upgraded += up
	runStatus := report.StatusOf(rds, nil)
	if err != nil {
		runStatus = report.StatusOf(nil, err)
		if runStatus != report.Fail {
			sr.errs = append(sr.errs, fmt.Sprintf("%s (%sKubernetes %s): %v", n.span, n.olmTag, n.kube, err))
			sr.plain = append(sr.plain, err.Error())
		}
	}
	sr.status = report.Worse(sr.status, runStatus)
	result := "passed"
	if runStatus != report.Pass {
		result = map[report.Status]string{report.Fail: "FAILED", report.Error: "ERROR (infrastructure)", report.ActionRequired: "ACTION REQUIRED"}[runStatus]
		sr.failed = append(sr.failed, n.names...)
	}
	line := fmt.Sprintf("%d of %d installed (%s)", ok, len(r.plan.Packages), strings.Join(r.plan.Packages, ", "))
	if len(r.plan.FromBase) > 0 {
		line += fmt.Sprintf(", %d of %d upgraded from the base catalog", up, len(r.plan.FromBase))
	}
	shared := ""
	if len(n.names) > 1 {
		shared = ", one install: the same node image, catalog images and packages"
	}
	fmt.Fprintf(&sr.lines, "- %s (%sKubernetes %s, node image %s%s): %s, %s in %s\n", n.span, n.olmTag, n.kube, nodeImageLabel(r.nodeImage), shared, result, line, took)
}

// stage is the smoke stage the jobs add up to: a layout of one catalog whose install was not ruled out,
// with OLM v0 only, says it as it always did (oneCatalogStage); otherwise the stage names the catalogs
// (catalogsStage).
func (sr *smokeRound) stage() report.Stage {
	if len(sr.excluded) > 0 {
		fmt.Fprintf(&sr.lines, "- %s: not installed (outside smoke.clusterVersions)\n", template.CatalogSpan(sr.excluded, sr.order))
	}
	if sr.one && len(sr.plain) == len(sr.errs) && !sr.anyV1 {
		return sr.oneCatalogStage()
	}
	return sr.catalogsStage()
}

// oneCatalogStage is the stage of a layout of one catalog: counts and time, no details, its errors as
// they are.
func (sr *smokeRound) oneCatalogStage() report.Stage {
	sum := fmt.Sprintf("%d of %d changed packages reached CSV Succeeded", sr.succeeded, sr.installs)
	if sr.fromBase > 0 {
		sum += fmt.Sprintf(", %d of %d upgraded from the base catalog", sr.upgraded, sr.fromBase)
	}
	st := report.Stage{Status: sr.status, Summary: fmt.Sprintf("%s (%s)", sum, time.Since(sr.start).Round(time.Second)), Diagnostics: sr.ds}
	if len(sr.plain) > 0 && sr.status != report.Fail {
		st.Err = strings.Join(sr.plain, "; ")
	}
	return st
}

// catalogsStage is the stage naming its catalogs: counts, the catalogs that failed or were left out and
// time in the summary, a line per job in the details, errors prefixed with their catalogs.
func (sr *smokeRound) catalogsStage() report.Stage {
	catalogs := 0
	for _, r := range sr.runs {
		catalogs += len(r.cats)
	}
	reached := "reached CSV Succeeded"
	if sr.anyV1 {
		reached = "succeeded (OLM v0: CSV Succeeded; OLM v1: Installed and its Deployments Available)"
	}
	sum := fmt.Sprintf("%s smoke-installed in %s one after the other: %d of %d package installs %s",
		plural(catalogs, "catalog"), plural(len(sr.jobs), "kind cluster"), sr.succeeded, sr.installs, reached)
	if sr.fromBase > 0 {
		sum += fmt.Sprintf(", %d of %d upgraded from the base catalog", sr.upgraded, sr.fromBase)
	}
	if len(sr.failed) > 0 {
		sum += "; failed: " + template.CatalogSpan(sr.failed, sr.order)
	}
	if len(sr.excluded) > 0 {
		sum += "; not installed (smoke.clusterVersions): " + template.CatalogSpan(sr.excluded, sr.order)
	}
	sum += fmt.Sprintf(" (%s)", time.Since(sr.start).Round(time.Second))
	st := report.Stage{Status: sr.status, Summary: sum, Diagnostics: sr.ds, Details: "#### Catalogs\n\n" + sr.lines.String()}
	if len(sr.errs) > 0 && sr.status != report.Fail {
		st.Err = strings.Join(sr.errs, "; ")
	}
	return st
}
