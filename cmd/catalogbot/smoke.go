package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/report"
)

// smokeOptions are what smoke's command line says.
type smokeOptions struct {
	io         streams
	out        outputFlags
	smoke      smoke.Options
	jsonResult string
	// run is smoke.Run (tests give a hand-written fake)
	run func(ctx context.Context, opts smoke.Options) (smoke.Result, error)
}

func newSmokeCmd(runF runner[smokeOptions]) *cobra.Command {
	so := &smokeOptions{}
	o := &so.smoke
	cmd := &cobra.Command{
		Use:   "smoke --catalog-image REPO@sha256:... --package NAME...",
		Short: "Install operators from a catalog image in a kind cluster with OLM and wait for CSV Succeeded",
		Long: `smoke creates a kind cluster (--create-cluster; docker or podman), reuses one (--cluster), or uses any
cluster (--kubeconfig); installs OLM from --olm-manifests when it is missing; loads the catalog image
(--catalog-archive, e.g. from catalogbot build --output tarball:FILE) into the nodes and references it by
digest in a CatalogSource; then for each package creates a namespace, an OperatorGroup matching the CSV's
install modes and a Subscription, approves the InstallPlan and waits for the CSV to succeed. Failures come
with Subscription/InstallPlan/CSV conditions, events, pod statuses and logs. A cluster it created is
deleted at the end, also on failure and Ctrl-C, unless --keep.

With --olm v1 it installs with OLM v1 instead (from --olmv1-manifests when the cluster lacks it): a
ClusterCatalog serves --catalog-image (which catalogd pulls itself: no --catalog-archive), each package
gets a namespace and a ClusterExtension (pinned to --version when given), and each must report
Installed=True and then have its Deployments available. --olm both runs both, one after the other.

See hack/kind-offline/README.md for running it on a machine without a container registry.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			so.io = streamsOf(cmd)
			return orDefault(runF, runSmoke)(cmd.Context(), so)
		},
	}
	so.out.add(cmd)
	f := cmd.Flags()
	f.StringVar(&o.CatalogImage, "catalog-image", "", "the catalog image, by digest")
	f.StringVar(&o.CatalogArchive, "catalog-archive", "", "image tarball of the catalog to load into the nodes")
	f.StringSliceVar(&o.ImageArchives, "image-archive", nil, "more image tarballs to load (bundle and operator images)")
	f.StringSliceVar(&o.Packages, "package", nil, "packages to install (repeatable)")
	f.StringToStringVar(&o.Channel, "channel", nil, "channel per package (default: the default channel), e.g. foo=stable")
	f.StringToStringVar(&o.Upgrade, "upgrade-from", nil, "install this CSV first, then upgrade to the channel head, e.g. foo=foo.v1.0.0")
	f.StringVar(&o.KubeconfigPath, "kubeconfig", "", "use this cluster")
	f.StringVar(&o.ClusterName, "cluster", "", "kind cluster name (reused if it exists)")
	f.BoolVar(&o.CreateCluster, "create-cluster", false, "create the kind cluster")
	f.StringVar(&o.NodeImage, "node-image", "", "kind node image")
	f.BoolVar(&o.Keep, "keep", false, "keep a created cluster for debugging")
	f.StringVar(&o.OLMManifestsDir, "olm-manifests", "", "install OLM from these manifests when it is missing (never from a moving URL)")
	f.StringVar(&o.OLM, "olm", "", "install with OLM v0 (CatalogSource, Subscription; the default), v1 (ClusterCatalog, ClusterExtension) or both")
	f.StringVar(&o.OLMv1ManifestsDir, "olmv1-manifests", "", "install OLM v1 from these self-contained manifests when the cluster lacks it")
	f.StringToStringVar(&o.Versions, "version", nil, "OLM v1: the bundle version per package the install must end at, e.g. foo=1.2.3")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "overall timeout")
	f.IntVar(&o.Parallel, "parallel", 2, "packages installed at once")
	f.StringVar(&so.jsonResult, "json-result", "", "also write the per-package JSON result here")
	return cmd
}

// runSmoke installs the packages from the catalog image in a cluster and reports each one: once, or with
// --olm both once per OLM (a stage each; --json-result then holds a list of the two results).
func runSmoke(ctx context.Context, so *smokeOptions) error {
	olms := []string{so.smoke.OLM}
	if so.smoke.OLM == config.SmokeOLMBoth {
		olms = []string{smoke.OLMv0, smoke.OLMv1}
	}
	run := so.run
	if run == nil {
		run = smoke.Run
	}
	var results []smoke.Result
	var stages []report.Stage
	for _, olm := range olms {
		o := so.smoke
		o.OLM = olm
		o.Progress = so.io.err
		start := time.Now()
		res, err := run(ctx, o)
		results = append(results, res)
		stages = append(stages, smokeStage(res, err, time.Since(start), olm, len(olms) > 1))
		if errors.Is(err, smoke.ErrClusterNotDeleted) {
			break // only one kind cluster at a time
		}
	}
	if so.jsonResult != "" {
		var v any = results
		if len(results) == 1 {
			v = results[0]
		}
		data, merr := json.MarshalIndent(v, "", "  ")
		if merr == nil {
			merr = filetree.WriteFileBytes(so.jsonResult, 0o644, append(data, '\n'))
		}
		if merr != nil {
			return merr
		}
	}
	return so.out.emit(so.io.out, &report.Report{Title: "smoke " + so.smoke.CatalogImage, Stages: stages})
}

// smokeStage is the report stage of one Run with olm; named for its OLM when several ran.
func smokeStage(res smoke.Result, err error, took time.Duration, olm string, named bool) report.Stage {
	st := report.Stage{Name: "smoke", Status: report.Pass, Duration: took, Diagnostics: res.Diagnostics}
	if named {
		st.Name = "smoke (OLM " + olm + ")"
	}
	ok := 0
	for _, p := range res.Packages {
		st.Diagnostics = append(st.Diagnostics, p.Diagnostics...)
		if p.Succeeded {
			ok++
		}
	}
	st.Diagnostics = diag.Sort(st.Diagnostics)
	st.Summary = fmt.Sprintf("%d of %d packages reached CSV Succeeded", ok, len(res.Packages))
	if olm == smoke.OLMv1 {
		st.Summary = fmt.Sprintf("%d of %d packages installed by OLM v1 with their Deployments available", ok, len(res.Packages))
	}
	// err, when set, decides: a package that failed while the cluster failed is not the author's fault
	if st.Status = report.StatusOf(nil, err); err != nil && diag.CategoryOf(err) != diag.Invalid {
		st.Err = err.Error()
	}
	return st
}
