package smoke

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// stepFunc runs one timed shared step of Run, recording its timing and its failure.
type stepFunc = func(name string, fn func(ctx context.Context) error) error

// runV1 is Run after the cluster is up and the images are loaded, with OLM v1: it makes sure OLM v1
// runs, serves the catalog from a ClusterCatalog and installs every package with a ClusterExtension.
// What it creates in a cluster it did not create (or that is kept) is deleted at the end unless Keep.
func runV1(ctx context.Context, opts Options, c *clients, res *Result, step stepFunc, p *progress) error {
	res.OLM = OLMv1
	if err := step("OLM v1", func(ctx context.Context) error {
		installed, err := ensureOLMv1(ctx, c, opts.OLMv1ManifestsDir, p)
		res.OLMInstalled = installed
		return err
	}); err != nil {
		if diag.CategoryOf(err) != diag.Usage {
			res.Diagnostics = append(res.Diagnostics, boundedDiagnostics(ctx, func(ctx context.Context) []diag.Diagnostic {
				return podDiagnostics(ctx, c, "", olmv1Namespace, false)
			})...)
		}
		return err
	}

	res.ClusterCatalog = ClusterCatalogName
	if !opts.Keep && (!res.ClusterCreated || opts.KeepCluster) {
		defer cleanupV1(context.WithoutCancel(ctx), c, opts.Packages, p)
	}
	catalogStep := func(name, image string) error {
		err := step(name, func(ctx context.Context) error {
			if err := applyClusterCatalog(ctx, c, image); err != nil {
				return err
			}
			return waitClusterCatalogServing(ctx, c, image)
		})
		if err != nil {
			res.Diagnostics = append(res.Diagnostics, boundedDiagnostics(ctx, func(ctx context.Context) []diag.Diagnostic {
				return append(clusterCatalogDiagnostics(ctx, c, ""), controllerLogDiagnostics(ctx, c, "", []string{ClusterCatalogName})...)
			})...)
		}
		return err
	}
	first, name := opts.CatalogImage, "cluster catalog"
	if opts.BaseCatalogImage != "" {
		first, name = opts.BaseCatalogImage, "cluster catalog (base catalog)"
	}
	if err := catalogStep(name, first); err != nil {
		return err
	}

	// packages: with a base catalog, first those it offers at their base version; then the
	// ClusterCatalog serves the head, their version is switched to the head's, and the others install.
	in := &v1installer{c: c, opts: opts, progress: p, interval: 2 * pollEvery, sharer: namesakes(opts.Packages)}
	res.Packages = make([]PackageResult, len(opts.Packages))
	err := baseThenHead{
		fromBase: func(ctx context.Context, pkg string) PackageResult {
			return in.install(ctx, pkg, opts.BaseVersions[pkg], "", "base catalog")
		},
		toHead: func() error { return catalogStep("cluster catalog (head catalog)", opts.CatalogImage) },
		install: func(ctx context.Context, pkg string) PackageResult {
			return in.install(ctx, pkg, opts.Versions[pkg], opts.Expect[pkg], "")
		},
		upgrade: in.upgrade,
	}.run(ctx, opts, res.Packages)
	if err != nil {
		markOLM(res.Packages)
		return err
	}
	markOLM(res.Packages)
	return verdict(ctx, *res)
}

// markOLM labels every package result (also those never started) as OLM v1's.
func markOLM(pkgs []PackageResult) {
	for i := range pkgs {
		if pkgs[i].Package != "" {
			pkgs[i].OLM = OLMv1
		}
	}
}

// cleanupV1 deletes what runV1 created in a cluster it did not create: the ClusterExtensions (OLM v1
// uninstalls their releases), the package namespaces and the ClusterCatalog. Errors are reported as
// progress only; they never change the result.
func cleanupV1(ctx context.Context, c *clients, pkgs []string, p *progress) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, pkg := range pkgs {
		name := NamespaceFor(pkg)
		if err := c.dyn.Resource(gvrClusterExtension).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			p.printf("cleanup: deleting ClusterExtension %s: %v", name, err)
		}
	}
	for _, pkg := range pkgs {
		if err := c.core.deleteNamespace(ctx, NamespaceFor(pkg)); err != nil && !apierrors.IsNotFound(err) {
			p.printf("cleanup: deleting namespace %s: %v", NamespaceFor(pkg), err)
		}
	}
	if err := c.dyn.Resource(gvrClusterCatalog).Delete(ctx, ClusterCatalogName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		p.printf("cleanup: deleting ClusterCatalog %s: %v", ClusterCatalogName, err)
	}
}
