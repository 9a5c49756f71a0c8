package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/catalogbot/catalogbot/checks/smoke"
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
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "overall timeout")
	f.IntVar(&o.Parallel, "parallel", 2, "packages installed at once")
	f.StringVar(&so.jsonResult, "json-result", "", "also write the per-package JSON result here")
	return cmd
}

// runSmoke installs the packages from the catalog image in a cluster and reports each one.
func runSmoke(ctx context.Context, so *smokeOptions) error {
	o := so.smoke
	o.Progress = so.io.err
	start := time.Now()
	res, err := smoke.Run(ctx, o)
	if so.jsonResult != "" {
		data, merr := json.MarshalIndent(res, "", "  ")
		if merr == nil {
			merr = filetree.WriteFileBytes(so.jsonResult, 0o644, append(data, '\n'))
		}
		if merr != nil {
			return merr
		}
	}
	st := report.Stage{Name: "smoke", Status: report.Pass, Duration: time.Since(start), Diagnostics: res.Diagnostics}
	ok := 0
	for _, p := range res.Packages {
		st.Diagnostics = append(st.Diagnostics, p.Diagnostics...)
		if p.Succeeded {
			ok++
		}
	}
	st.Diagnostics = diag.Sort(st.Diagnostics)
	st.Summary = fmt.Sprintf("%d of %d packages reached CSV Succeeded", ok, len(res.Packages))
	// err, when set, decides: a package that failed while the cluster failed is not the author's fault
	if st.Status = report.StatusOf(nil, err); err != nil && diag.CategoryOf(err) != diag.Invalid {
		st.Err = err.Error()
	}
	return so.out.emit(so.io.out, &report.Report{Title: "smoke " + o.CatalogImage, Stages: []report.Stage{st}})
}
