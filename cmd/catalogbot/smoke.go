package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// registry (--registry) is the repository prefix the catalog archive is pushed under for OLM v1.
	registry string
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
ClusterCatalog serves --catalog-image (which catalogd pulls itself), each package
gets a namespace and a ClusterExtension (pinned to --version when given), and each must report
Installed=True and then have its Deployments available. --olm both runs both, one after the other.
catalogd cannot see an archive loaded into the nodes: with --registry PREFIX (what pr's --smoke-registry
means, e.g. localhost:5001/catalogbot-smoke) the --catalog-archive (an OCI layout tar or directory, or a
docker-save tar) is pushed by digest to PREFIX/catalog and OLM v1 installs from there; OLM v0 still loads
the archive into the nodes.

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
	f.StringVar(&so.registry, "registry", "", "OLM v1: push --catalog-archive by digest under this repository prefix, which the cluster pulls from (e.g. localhost:5001/catalogbot-smoke); credentials from the docker config")
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
	v1Image, err := so.v1CatalogImage(ctx, olms)
	if err != nil {
		return err
	}
	var results []smoke.Result
	var stages []report.Stage
	for _, olm := range olms {
		o := so.smoke
		o.OLM = olm
		o.Progress = so.io.err
		if olm == smoke.OLMv1 && v1Image != "" {
			o.CatalogImage, o.CatalogArchive = v1Image, "" // catalogd pulls the pushed image itself
		}
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
	title := so.smoke.CatalogImage
	if title == "" {
		title = v1Image
	}
	return so.out.emit(so.io.out, &report.Report{Title: "smoke " + title, Stages: stages})
}

// v1CatalogImage is, when --registry is set, the reference OLM v1 installs from: the --catalog-archive
// pushed by digest under the prefix. An OLM v1 run given an archive and no --registry, or --registry
// without an archive or an OLM v1 run, is a usage error before any cluster is touched.
func (so *smokeOptions) v1CatalogImage(ctx context.Context, olms []string) (string, error) {
	v1 := slices.Contains(olms, smoke.OLMv1)
	archive := so.smoke.CatalogArchive
	switch {
	case so.registry == "" && v1 && archive != "":
		return "", diag.UsageError(errors.New("smoke --olm v1: catalogd pulls the catalog image itself and cannot see --catalog-archive: give --registry PREFIX to push it there (e.g. localhost:5001/catalogbot-smoke), or a pullable --catalog-image by digest without --catalog-archive"))
	case so.registry == "":
		return "", nil
	case !v1:
		return "", diag.UsageError(errors.New("smoke --registry is for OLM v1 installs (--olm v1 or both)"))
	case archive == "":
		return "", diag.UsageError(errors.New("smoke --registry pushes the catalog of --catalog-archive (an OCI layout tar or directory, or a docker-save tar): give it"))
	}
	d, err := pushSmokeCatalog(ctx, archive, so.registry, smokePushOptions())
	if err != nil {
		return "", err
	}
	if want := so.smoke.CatalogImage; want != "" {
		if i := strings.Index(want, "@"); i < 0 || want[i+1:] != d.DigestStr() {
			return "", diag.UsageError(fmt.Errorf("smoke: --catalog-archive holds %s, not --catalog-image %s: OLM v0 and v1 would install different catalogs", d.DigestStr(), want))
		}
	}
	fmt.Fprintf(so.io.err, "pushed the catalog for OLM v1 to %s\n", d)
	return d.String(), nil
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
