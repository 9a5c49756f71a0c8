package smoke

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/diag"
)

// ErrPackagesFailed is returned (wrapped, category Invalid) when at least one package did not install.
var ErrPackagesFailed = errors.New("smoke install failed")

// ErrClusterNotDeleted is returned (wrapped, category Infra, joined to any other error) when Run created
// a cluster and could not delete it: a caller that must not have two clusters at once stops there.
var ErrClusterNotDeleted = errors.New("the smoke cluster was not deleted")

// Run creates or connects to the cluster, makes sure OLM runs, serves the catalog from a CatalogSource
// and installs every package, returning a result per package. It deletes what it created unless Keep,
// also when it fails or ctx is cancelled. Errors are categorised: usage (options), infrastructure
// (cluster, OLM, catalog), invalid (a package failed; Result has the diagnostics).
func Run(ctx context.Context, opts Options) (Result, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return Result{CatalogImage: opts.CatalogImage}, err
	}
	var backend clusterBackend
	if opts.ClusterName != "" {
		backend = newKindBackend(opts.Progress)
	}
	return run(ctx, opts, backend, newClients)
}

// run is Run with its cluster backend and client constructor injected (tests use fakes). Its steps, in
// order: the cluster (found, created or named by a kubeconfig), images into its nodes, OLM, the catalog's
// CatalogSource, the packages. A cluster it created is deleted at the end unless kept, and what it made in
// a cluster it did not create is cleaned up, also when a step fails or ctx is cancelled.
func run(ctx context.Context, opts Options, backend clusterBackend, connect func([]byte) (*clients, error)) (_ Result, err error) {
	r := &smokeRun{opts: opts, backend: backend, p: newProgress(opts.Progress),
		res: Result{Cluster: opts.ClusterName, CatalogImage: opts.CatalogImage}}
	create, err := r.findCluster(ctx)
	if err != nil {
		return r.res, err
	}
	if create {
		r.res.ClusterCreated = true
		if !opts.Keep && !opts.KeepCluster {
			// not err's shadow: the deletion adds to the error run returns
			defer func() { err = r.deleteCluster(ctx, err) }()
		}
		if err := r.createCluster(ctx); err != nil {
			return r.res, err
		}
	}
	c, err := r.connect(ctx, connect)
	if err != nil {
		return r.res, err
	}
	if err := r.loadImages(ctx); err != nil {
		return r.res, err
	}
	if opts.v1() {
		err = runV1(ctx, opts, c, &r.res, r.stepsIn(ctx), r.p)
		return r.res, err
	}
	loc, err := r.olm(ctx, c)
	if err != nil {
		return r.res, err
	}
	r.res.CatalogNamespace = opts.CatalogNamespace
	if r.res.CatalogNamespace == "" {
		r.res.CatalogNamespace = loc.GlobalNamespace
	}
	r.res.CatalogSource = CatalogSourceName
	if !opts.Keep && (!r.res.ClusterCreated || opts.KeepCluster) {
		defer cleanup(context.WithoutCancel(ctx), c, r.res.CatalogNamespace, opts.Packages, r.p)
	}
	if err := r.serveFirstCatalog(ctx, c); err != nil {
		return r.res, err
	}
	if err := r.installPackages(ctx, c); err != nil {
		return r.res, err
	}
	return r.res, verdict(ctx, r.res)
}

// baseThenHead installs a catalog's packages as both OLMs do: with a base catalog, those it offers
// (Options.FromBase) install from it first; then toHead makes the catalog serve the head, and the other
// packages install while those from the base upgrade (when they installed). Its error is toHead's.
type baseThenHead struct {
	fromBase func(ctx context.Context, pkg string) PackageResult
	toHead   func() error
	install  func(ctx context.Context, pkg string) PackageResult
	upgrade  func(ctx context.Context, pkg string, r *PackageResult)
}

func (b baseThenHead) run(ctx context.Context, opts Options, results []PackageResult) error {
	fromBase := map[string]bool{}
	for _, pkg := range opts.FromBase {
		fromBase[pkg] = true
	}
	if opts.BaseCatalogImage != "" {
		parallel(ctx, opts, results, func(ctx context.Context, i int, pkg string) {
			if fromBase[pkg] {
				results[i] = b.fromBase(ctx, pkg)
				results[i].FromBase = true
			}
		})
		if err := b.toHead(); err != nil {
			return err
		}
	}
	parallel(ctx, opts, results, func(ctx context.Context, i int, pkg string) {
		switch {
		case !fromBase[pkg]:
			results[i] = b.install(ctx, pkg)
		case results[i].Succeeded:
			b.upgrade(ctx, pkg, &results[i])
		}
	})
	return nil
}

// verdict is the error of a run whose packages were all tried: none, the failed packages (the change's
// fault), or an interruption (infrastructure).
func verdict(ctx context.Context, res Result) error {
	if failed := res.Failed(); len(failed) > 0 {
		if ctx.Err() != nil {
			return diag.InfraError(fmt.Errorf("%w: interrupted: %w", ErrPackagesFailed, context.Cause(ctx)))
		}
		for _, p := range res.Packages {
			if len(p.Diagnostics) > 0 && p.Diagnostics[0].Rule == ruleNotEnforced {
				return diag.InfraError(fmt.Errorf("%w: %s: the cluster does not enforce Pod Security Admission", ErrPackagesFailed, strings.Join(failed, ", ")))
			}
		}
		return diag.InvalidError(fmt.Errorf("%w: %s", ErrPackagesFailed, strings.Join(failed, ", ")))
	}
	return nil
}

// cleanup deletes what Run created in a cluster it did not create: the package namespaces and the
// CatalogSource. Errors are reported as progress only; they never change the result.
func cleanup(ctx context.Context, c *clients, catalogNS string, pkgs []string, p *progress) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, pkg := range pkgs {
		for _, ns := range []string{NamespaceFor(pkg), NamespaceFor(pkg) + "-target"} {
			if err := c.core.deleteNamespace(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				p.printf("cleanup: deleting namespace %s: %v", ns, err)
			}
		}
	}
	if err := c.dyn.Resource(gvrCatalogSource).Namespace(catalogNS).Delete(ctx, CatalogSourceName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		p.printf("cleanup: deleting CatalogSource %s/%s: %v", catalogNS, CatalogSourceName, err)
	}
}

// progress writes timestamped lines, safe for the parallel installs.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func newProgress(w io.Writer) *progress { return &progress{w: w, start: time.Now()} }

func (p *progress) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "smoke: [%6.1fs] %s\n", time.Since(p.start).Seconds(), fmt.Sprintf(format, args...))
}

// parallel runs fn for every package, at most opts.Parallel at once; a package not started before ctx
// ended gets a "cancelled" result.
func parallel(ctx context.Context, opts Options, results []PackageResult, fn func(ctx context.Context, i int, pkg string)) {
	var g errgroup.Group
	g.SetLimit(max(opts.Parallel, 1))
	for i, pkg := range opts.Packages {
		if ctx.Err() != nil {
			results[i] = PackageResult{Package: pkg, Namespace: NamespaceFor(pkg), Diagnostics: []diag.Diagnostic{{
				Severity: diag.Error, Check: "smoke", Rule: "cancelled", Package: pkg, Message: "not started: " + context.Cause(ctx).Error()}}}
			continue
		}
		g.Go(func() error {
			fn(ctx, i, pkg)
			return nil
		})
	}
	g.Wait()
}

// nodeImageName names the node image a created cluster gets in errors ("" is kind's own default).
func nodeImageName(image string) string {
	if image == "" {
		return "(kind's default)"
	}
	return image
}
