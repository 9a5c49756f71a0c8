package smoke

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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

// run is Run with its cluster backend and client constructor injected (tests use fakes).
func run(ctx context.Context, opts Options, backend clusterBackend, connect func([]byte) (*clients, error)) (res Result, err error) {
	p := newProgress(opts.Progress)
	res = Result{Cluster: opts.ClusterName, CatalogImage: opts.CatalogImage}
	step := func(name string, fn func(ctx context.Context) error) error {
		start := time.Now()
		p.printf("%s ...", name)
		sctx, cancel := context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
		err := fn(sctx)
		res.Steps = append(res.Steps, timing(name, start, err))
		if err != nil {
			p.printf("%s: FAILED after %.1fs: %v", name, time.Since(start).Seconds(), err)
			if diag.CategoryOf(err) == diag.Internal {
				err = diag.InfraError(err)
			}
			res.Diagnostics = append(res.Diagnostics, diag.Diagnostic{Severity: diag.Error, Check: "smoke", Rule: "step-" + strings.ReplaceAll(name, " ", "-"), Message: capText(err.Error(), maxMessage)})
			return err
		}
		p.printf("%s: done in %.1fs", name, time.Since(start).Seconds())
		return nil
	}

	// 1. cluster
	var kubeconfig []byte
	if opts.ClusterName != "" {
		// not err: the deferred deletion below must add to the error Run returns, not to a shadow of it
		exists, xerr := backend.Exists(ctx, opts.ClusterName)
		if xerr != nil {
			if opts.CreateCluster {
				xerr = fmt.Errorf("kind cluster %s with node image %s: %w", opts.ClusterName, nodeImageName(opts.NodeImage), xerr)
			}
			return res, diag.InfraError(xerr)
		}
		switch {
		case exists:
			p.printf("reusing kind cluster %s", opts.ClusterName)
		case !opts.CreateCluster:
			return res, diag.UsageError(fmt.Errorf("kind cluster %s does not exist (create it, or ask for it to be created)", opts.ClusterName))
		default:
			res.ClusterCreated = true
			if !opts.Keep && !opts.KeepCluster {
				defer func() {
					// deletion must happen even when ctx was cancelled
					dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
					defer cancel()
					if derr := backend.Delete(dctx, opts.ClusterName); derr != nil {
						err = errors.Join(err, diag.InfraError(fmt.Errorf("%w: %w", ErrClusterNotDeleted, derr)))
					} else {
						p.printf("deleted kind cluster %s", opts.ClusterName)
					}
				}()
			}
			if err := step("create cluster "+opts.ClusterName, func(ctx context.Context) error {
				return backend.Create(ctx, opts.ClusterName, opts.NodeImage, opts.KindConfig)
			}); err != nil {
				return res, err
			}
		}
		if kubeconfig, err = backend.KubeConfig(ctx, opts.ClusterName); err != nil {
			return res, diag.InfraError(err)
		}
	} else {
		if kubeconfig, err = os.ReadFile(opts.KubeconfigPath); err != nil {
			return res, diag.UsageError(fmt.Errorf("kubeconfig: %w", err))
		}
	}
	c, err := connect(kubeconfig)
	if err != nil {
		return res, diag.InfraError(err)
	}

	// 2. images into the nodes, before OLM: its own images may come from the archives
	archives := opts.ImageArchives
	for _, a := range []string{opts.CatalogArchive, opts.BaseCatalogArchive} {
		if a != "" {
			archives = append([]string{a}, archives...)
		}
	}
	if len(archives) > 0 {
		if err := step("load images", func(ctx context.Context) error {
			for _, a := range archives {
				if err := backend.LoadArchive(ctx, opts.ClusterName, a); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return res, err
		}
	}

	if opts.v1() {
		err = runV1(ctx, opts, c, &res, step, p)
		return res, err
	}

	// 3. OLM
	var loc olmLocation
	if err := step("OLM", func(ctx context.Context) error {
		present, err := olmPresent(ctx, c)
		if err != nil {
			return err
		}
		if !present {
			if opts.OLMManifestsDir == "" {
				return diag.UsageError(errNoOLM)
			}
			p.printf("OLM not found; installing it from %s", opts.OLMManifestsDir)
			if err := installOLM(ctx, c, opts.OLMManifestsDir); err != nil {
				return err
			}
			res.OLMInstalled = true
		}
		loc, err = waitOLM(ctx, c)
		return err
	}); err != nil {
		return res, err
	}

	// 4. catalog
	res.CatalogNamespace = opts.CatalogNamespace
	if res.CatalogNamespace == "" {
		res.CatalogNamespace = loc.GlobalNamespace
	}
	res.CatalogSource = CatalogSourceName
	if !opts.Keep && (!res.ClusterCreated || opts.KeepCluster) {
		defer cleanup(context.WithoutCancel(ctx), c, res.CatalogNamespace, opts.Packages, p)
	}
	first := opts.CatalogImage
	if opts.BaseCatalogImage != "" {
		first = opts.BaseCatalogImage
	}
	catalogStep := func(name, image string) error {
		err := step(name, func(ctx context.Context) error {
			if err := createCatalogSource(ctx, c, res.CatalogNamespace, image); err != nil {
				return err
			}
			return waitCatalogServing(ctx, c, res.CatalogNamespace, image)
		})
		if err != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			res.Diagnostics = append(res.Diagnostics, podDiagnostics(dctx, c, "", res.CatalogNamespace, true)...)
			cancel()
		}
		return err
	}
	name := "catalog source"
	if opts.BaseCatalogImage != "" {
		name = "catalog source (base catalog)"
	}
	if err := catalogStep(name, first); err != nil {
		return res, err
	}

	// 5. packages, in parallel up to the bound: with a base catalog, first those it offers, then the
	// CatalogSource serves the head and they must upgrade while the others install fresh.
	in := &installer{c: c, opts: opts, catalogNS: res.CatalogNamespace, progress: p, interval: 2 * pollEvery}
	res.Packages = make([]PackageResult, len(opts.Packages))
	err = baseThenHead{
		fromBase: func(ctx context.Context, pkg string) PackageResult { return in.install(ctx, pkg, "", "base catalog") },
		toHead:   func() error { return catalogStep("catalog source (head catalog)", opts.CatalogImage) },
		install:  func(ctx context.Context, pkg string) PackageResult { return in.install(ctx, pkg, opts.Expect[pkg], "") },
		upgrade: func(ctx context.Context, pkg string, r *PackageResult) {
			in.upgrade(ctx, pkg, opts.Expect[pkg], r)
		},
	}.run(ctx, opts, res.Packages)
	if err != nil {
		return res, err
	}
	return res, verdict(ctx, res)
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
