package smoke

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/catalogbot/catalogbot/diag"
)

// smokeRun is one run's state as run's steps fill it in.
type smokeRun struct {
	opts    Options
	backend clusterBackend
	p       *progress
	res     Result
}

// step runs one timed step under opts.Timeout, recording its timing and, when it fails, a diagnostic (an
// internal error counts as infrastructure).
func (r *smokeRun) step(ctx context.Context, name string, fn func(ctx context.Context) error) error {
	start := time.Now()
	r.p.printf("%s ...", name)
	sctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	err := fn(sctx)
	r.res.Steps = append(r.res.Steps, timing(name, start, err))
	if err != nil {
		r.p.printf("%s: FAILED after %.1fs: %v", name, time.Since(start).Seconds(), err)
		if diag.CategoryOf(err) == diag.Internal {
			err = diag.InfraError(err)
		}
		r.res.Diagnostics = append(r.res.Diagnostics, diag.Diagnostic{Severity: diag.Error, Check: "smoke", Rule: "step-" + strings.ReplaceAll(name, " ", "-"), Message: capText(err.Error(), maxMessage)})
		return err
	}
	r.p.printf("%s: done in %.1fs", name, time.Since(start).Seconds())
	return nil
}

// stepsIn is step under ctx, for the OLM v1 run.
func (r *smokeRun) stepsIn(ctx context.Context) stepFunc {
	return func(name string, fn func(ctx context.Context) error) error { return r.step(ctx, name, fn) }
}

// findCluster looks the named kind cluster up: reused when it exists, to be created when it does not and
// creating was asked for (true). Without a cluster name the kubeconfig names the cluster.
func (r *smokeRun) findCluster(ctx context.Context) (create bool, err error) {
	name := r.opts.ClusterName
	if name == "" {
		return false, nil
	}
	exists, err := r.backend.Exists(ctx, name)
	if err != nil {
		if r.opts.CreateCluster {
			err = fmt.Errorf("kind cluster %s with node image %s: %w", name, nodeImageName(r.opts.NodeImage), err)
		}
		return false, diag.InfraError(err)
	}
	switch {
	case exists:
		r.p.printf("reusing kind cluster %s", name)
		return false, nil
	case !r.opts.CreateCluster:
		return false, diag.UsageError(fmt.Errorf("kind cluster %s does not exist (create it, or ask for it to be created)", name))
	}
	return true, nil
}

func (r *smokeRun) createCluster(ctx context.Context) error {
	return r.step(ctx, "create cluster "+r.opts.ClusterName, func(ctx context.Context) error {
		return r.backend.Create(ctx, r.opts.ClusterName, r.opts.NodeImage, r.opts.KindConfig)
	})
}

// deleteCluster deletes the cluster run created, also when ctx was cancelled, joining a failure to err.
func (r *smokeRun) deleteCluster(ctx context.Context, err error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if derr := r.backend.Delete(dctx, r.opts.ClusterName); derr != nil {
		return errors.Join(err, diag.InfraError(fmt.Errorf("%w: %w", ErrClusterNotDeleted, derr)))
	}
	r.p.printf("deleted kind cluster %s", r.opts.ClusterName)
	return err
}

// connect makes the clients of the kind cluster, or of the cluster the kubeconfig file names.
func (r *smokeRun) connect(ctx context.Context, connect func([]byte) (*clients, error)) (*clients, error) {
	var kubeconfig []byte
	var err error
	if r.opts.ClusterName != "" {
		if kubeconfig, err = r.backend.KubeConfig(ctx, r.opts.ClusterName); err != nil {
			return nil, diag.InfraError(err)
		}
	} else if kubeconfig, err = os.ReadFile(r.opts.KubeconfigPath); err != nil {
		return nil, diag.UsageError(fmt.Errorf("kubeconfig: %w", err))
	}
	c, err := connect(kubeconfig)
	if err != nil {
		return nil, diag.InfraError(err)
	}
	return c, nil
}

// loadImages loads the image archives into the nodes, the catalogs' first, before OLM: its own images may
// come from the archives.
func (r *smokeRun) loadImages(ctx context.Context) error {
	archives := r.opts.ImageArchives
	for _, a := range []string{r.opts.CatalogArchive, r.opts.BaseCatalogArchive} {
		if a != "" {
			archives = append([]string{a}, archives...)
		}
	}
	if len(archives) == 0 {
		return nil
	}
	return r.step(ctx, "load images", func(ctx context.Context) error {
		for _, a := range archives {
			if err := r.backend.LoadArchive(ctx, r.opts.ClusterName, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// olm makes sure OLM v0 runs, installing it from opts.OLMManifestsDir when it is not there, and finds
// where it runs.
func (r *smokeRun) olm(ctx context.Context, c *clients) (loc olmLocation, err error) {
	err = r.step(ctx, "OLM", func(ctx context.Context) error {
		present, err := olmPresent(ctx, c)
		if err != nil {
			return err
		}
		if !present {
			if r.opts.OLMManifestsDir == "" {
				return diag.UsageError(errNoOLM)
			}
			r.p.printf("OLM not found; installing it from %s", r.opts.OLMManifestsDir)
			if err := installOLM(ctx, c, r.opts.OLMManifestsDir); err != nil {
				return err
			}
			r.res.OLMInstalled = true
		}
		loc, err = waitOLM(ctx, c)
		return err
	})
	return loc, err
}

// serveCatalog makes the CatalogSource serve image and waits until it does; when it does not, the
// diagnostics of its pods say why.
func (r *smokeRun) serveCatalog(ctx context.Context, c *clients, name, image string) error {
	err := r.step(ctx, name, func(ctx context.Context) error {
		if err := createCatalogSource(ctx, c, r.res.CatalogNamespace, image); err != nil {
			return err
		}
		return waitCatalogServing(ctx, c, r.res.CatalogNamespace, image)
	})
	if err != nil {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		r.res.Diagnostics = append(r.res.Diagnostics, podDiagnostics(dctx, c, "", r.res.CatalogNamespace, true)...)
		cancel()
	}
	return err
}

// serveFirstCatalog serves the base catalog when there is one, else the catalog.
func (r *smokeRun) serveFirstCatalog(ctx context.Context, c *clients) error {
	if r.opts.BaseCatalogImage != "" {
		return r.serveCatalog(ctx, c, "catalog source (base catalog)", r.opts.BaseCatalogImage)
	}
	return r.serveCatalog(ctx, c, "catalog source", r.opts.CatalogImage)
}

// installPackages installs the packages, in parallel up to the bound: with a base catalog, first those it
// offers, then the CatalogSource serves the head and they must upgrade while the others install fresh.
func (r *smokeRun) installPackages(ctx context.Context, c *clients) error {
	in := &installer{c: c, opts: r.opts, catalogNS: r.res.CatalogNamespace, progress: r.p, interval: 2 * pollEvery}
	r.res.Packages = make([]PackageResult, len(r.opts.Packages))
	return baseThenHead{
		fromBase: func(ctx context.Context, pkg string) PackageResult { return in.install(ctx, pkg, "", "base catalog") },
		toHead:   func() error { return r.serveCatalog(ctx, c, "catalog source (head catalog)", r.opts.CatalogImage) },
		install: func(ctx context.Context, pkg string) PackageResult {
			return in.install(ctx, pkg, r.opts.Expect[pkg], "")
		},
		upgrade: func(ctx context.Context, pkg string, res *PackageResult) {
			in.upgrade(ctx, pkg, r.opts.Expect[pkg], res)
		},
	}.run(ctx, r.opts, r.res.Packages)
}
