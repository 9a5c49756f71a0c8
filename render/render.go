package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// Kind is what a reference turned out to be.
type Kind string

const (
	IndexImage  Kind = "index image"
	BundleImage Kind = "bundle image"
	BundleDir   Kind = "bundle directory"
	CatalogDir  Kind = "catalog directory"
)

// DefaultConcurrency is how many references are rendered at once.
const DefaultConcurrency = 4

// progressThreshold is the number of references from which a run reports progress.
const progressThreshold = 5

// Options tune Render and Drift. The zero value renders with the defaults.
type Options struct {
	// BaseDir is where local references (./dir) are relative to: the references config's directory
	// when empty.
	BaseDir string
	// Root is the repository checkout local references must resolve inside, symlinks resolved: the git
	// work tree holding BaseDir when empty (BaseDir itself outside one). A reference leading anywhere
	// else is an error on its line, and nothing there is read.
	Root string
	// CatalogsDir is where the committed catalog's parent directory is in the repository: the drift
	// check's diagnostics name their files under it (the zero Dir: relative to that directory).
	CatalogsDir diag.Dir
	// AllowedRegistries, when not empty, lists the only registry hosts image references may be read
	// from (as images.allowedRegistries); a reference elsewhere is an error on its line and its registry
	// is never contacted.
	AllowedRegistries []string
	// Concurrency bounds the references rendered at once (DefaultConcurrency when 0).
	Concurrency int
	// CacheDir holds renders by image digest ($XDG_CACHE_HOME/catalogbot/render when empty);
	// NoCache turns the cache off.
	CacheDir string
	NoCache  bool
	// Progress, when set, gets one line per finished reference in runs of five references or more.
	Progress io.Writer
	// RemoteOptions are added after Render's own (x
	// credentials from the docker config keychain, retries; the platform); later options win.
	RemoteOptions []remote.Option
	// Platform an image index is resolved to (linux/amd64 when nil).
	Platform *v1.Platform
	// Bundle renders bundle images and directories.
	Bundle bundle.Options
	// Format of the files Drift compares: "yaml" (default) or "json".
	Format string
	// Limits on what an image may hold under the directories Render reads (the Default* constants
	// when 0).
	MaxTotalBytes, MaxFileBytes int64
	MaxEntries                  int
}

// Output is a rendered references config.
type Output struct {
	// Name is the config's name: the directory the references are written under.
	Name       string
	References []Rendered
}

// Rendered is one rendered reference.
type Rendered struct {
	Reference Reference
	Kind      Kind
	// Digest is the manifest digest an image reference resolved to ("" for directories).
	Digest string
	// Cached tells that the render came from the disk cache.
	Cached  bool
	Catalog *catalog.Catalog
}

// run is one Render call.
type run struct {
	cfg   *Config
	opts  Options
	regs  *registries
	allow allowList
	cache *diskCache
	lim   limits
	plat  v1.Platform
}

// Render renders every reference of cfg, at most Options.Concurrency at once, into per-reference
// file-based catalogs, in config order. A config ParseConfig found errors in is not rendered. Every
// reference is tried; each failure is a diagnostic on the reference's line, and the returned error then
// joins them, categorised by the worst (see worst).
func Render(ctx context.Context, cfg *Config, opts Options) (*Output, []diag.Diagnostic, error) {
	if ds := checkConfig(cfg); diag.HasErrors(ds) {
		file := "references config"
		if cfg != nil && cfg.File != "" {
			file = cfg.File
		}
		return nil, ds, diag.InvalidError(fmt.Errorf("%s has errors; nothing was rendered", file))
	}
	r, err := newRun(cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	n := len(cfg.References)
	out := &Output{Name: cfg.Name, References: make([]Rendered, n)}
	errs := make([]error, n)
	prog := &progress{w: opts.Progress, total: n}
	if n < progressThreshold {
		prog.w = nil
	}
	var g errgroup.Group
	g.SetLimit(max(r.opts.Concurrency, 1))
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			start := time.Now()
			out.References[i], errs[i] = r.reference(ctx, cfg.References[i])
			prog.done(out.References[i], cfg.References[i], errs[i], time.Since(start))
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		// Say what was cut short (the registry that did not answer is named in its reference's error).
		var cut []string
		for i, e := range errs {
			if e != nil {
				cut = append(cut, fmt.Sprintf("%s: %v", cfg.References[i].Name, e))
			}
		}
		if len(cut) > 0 {
			return nil, nil, fmt.Errorf("render %s: %w (%s)", cfg.File, err, strings.Join(cut, "; "))
		}
		return nil, nil, fmt.Errorf("render %s: %w", cfg.File, err)
	}
	var ds []diag.Diagnostic
	var failed []error
	for i, err := range errs {
		if err == nil {
			continue
		}
		ref := cfg.References[i]
		rule, hint := ruleOf(err)
		ds = append(ds, diag.Diagnostic{Severity: diag.Error, Check: Check, Rule: rule, File: cfg.File, Line: ref.Line,
			Message: fmt.Sprintf("reference %q: %v", ref.Name, err), Hint: hint})
		failed = append(failed, fmt.Errorf("reference %q: %w", ref.Name, err))
	}
	if len(failed) > 0 {
		err := fmt.Errorf("render %s: %d of %d references failed: %w", cfg.File, len(failed), n, errors.Join(failed...))
		return nil, diag.Sort(ds), diag.WithCategory(worst(failed), err)
	}
	return out, nil, nil
}

func newRun(cfg *Config, opts Options) (*run, error) {
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.BaseDir == "" {
		opts.BaseDir = filepath.Dir(cfg.File)
	}
	if opts.Root == "" {
		opts.Root = defaultRoot(opts.BaseDir)
	}
	allow, err := compileAllowList(opts.AllowedRegistries)
	if err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, opts: opts, allow: allow, plat: v1.Platform{OS: "linux", Architecture: "amd64"},
		lim: limits{maxTotal: DefaultMaxTotalBytes, maxFile: DefaultMaxFileBytes, maxEntries: DefaultMaxEntries}}
	if opts.Platform != nil {
		r.plat = *opts.Platform
	}
	if opts.MaxTotalBytes > 0 {
		r.lim.maxTotal = opts.MaxTotalBytes
	}
	if opts.MaxFileBytes > 0 {
		r.lim.maxFile = opts.MaxFileBytes
	}
	if opts.MaxEntries > 0 {
		r.lim.maxEntries = opts.MaxEntries
	}
	if !opts.NoCache {
		dir := opts.CacheDir
		if dir == "" {
			base, err := os.UserCacheDir()
			if err != nil {
				return nil, diag.UsageError(fmt.Errorf("render cache: %w (set a cache directory or turn the cache off)", err))
			}
			dir = filepath.Join(base, "catalogbot", "render")
		}
		r.cache = &diskCache{dir: dir}
	}
	regs, err := newRegistries(r.plat, opts.RemoteOptions)
	if err != nil {
		return nil, err
	}
	r.regs = regs
	return r, nil
}

// reference renders one reference.
func (r *run) reference(ctx context.Context, ref Reference) (Rendered, error) {
	if isLocalPath(ref.Image) {
		return r.local(ctx, ref)
	}
	return r.image(ctx, ref)
}

// image renders an index or bundle image, from the cache when it has the digest.
func (r *run) image(ctx context.Context, ref Reference) (Rendered, error) {
	out := Rendered{Reference: ref}
	img, err := parseImage(ref.Image)
	if err != nil {
		return out, err
	}
	if err := r.allow.check(img); err != nil {
		return out, err
	}
	d, desc, err := r.regs.resolve(ctx, img)
	if err != nil {
		return out, fmt.Errorf("image %s: %w", ref.Image, err)
	}
	out.Digest = d.DigestStr()
	key := cacheKey(d.DigestStr(), ref.Name, ref.Image, r.plat.String(), fmt.Sprint(r.opts.Bundle.CSVMetadata))
	if h, c, ok := r.cache.get(ctx, key); ok {
		out.Kind, out.Catalog, out.Cached = h.Kind, c, true
		return out, nil
	}
	p, err := r.regs.image(ctx, d, desc, r.lim)
	if err != nil {
		return out, fmt.Errorf("image %s: %w", ref.Image, err)
	}
	out.Kind = p.kind
	switch p.kind {
	case IndexImage:
		res, err := p.catalog(ctx)
		if err != nil {
			return out, fmt.Errorf("index image %s: %w", ref.Image, err)
		}
		if out.Catalog, err = packageOf(res, ref.Name, "index image "+ref.Image, p.root); err != nil {
			return out, err
		}
	default:
		b, err := r.opts.Bundle.Render(ctx, p.fsys, ref.Image)
		if err != nil {
			return out, fmt.Errorf("bundle image %s: %w", ref.Image, err)
		}
		if out.Catalog, err = bundleCatalog(b, ref, "bundle image "+ref.Image); err != nil {
			return out, err
		}
	}
	// The cache only saves time: a failure to write it does not fail the render.
	_ = r.cache.put(key, cacheHeader{Kind: out.Kind, Digest: out.Digest}, out.Catalog)
	return out, nil
}

// local renders a directory: a bundle (manifests/ and metadata/) or a file-based catalog.
func (r *run) local(ctx context.Context, ref Reference) (Rendered, error) {
	out := Rendered{Reference: ref}
	dir, err := localDir(r.opts.Root, r.opts.BaseDir, ref.Image)
	if err != nil {
		return out, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return out, ruleErr("directory-not-found", "", diag.InvalidError(fmt.Errorf("directory %s: %w", ref.Image, err)))
	}
	if !fi.IsDir() {
		return out, ruleErr("directory-not-found", "a local reference names a bundle or catalog directory",
			diag.InvalidError(fmt.Errorf("%s is not a directory", ref.Image)))
	}
	if isBundleDir(dir) {
		out.Kind = BundleDir
		b, err := r.opts.Bundle.RenderDir(ctx, dir, "")
		if err != nil {
			return out, err
		}
		out.Catalog, err = bundleCatalog(b, ref, "bundle directory "+dir)
		return out, err
	}
	out.Kind = CatalogDir
	res, err := catalog.LoadDir(ctx, dir, catalog.LoadOptions{})
	if err != nil {
		return out, fmt.Errorf("catalog directory %s: %w", dir, err)
	}
	out.Catalog, err = packageOf(res, ref.Name, "catalog directory "+dir, dir)
	return out, err
}

// isBundleDir tells a bundle directory as opm does: it has manifests/ and metadata/ directories.
func isBundleDir(dir string) bool {
	for _, sub := range []string{"manifests", "metadata"} {
		if fi, err := os.Stat(filepath.Join(dir, sub)); err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// bundleCatalog wraps a rendered bundle, which must be of the reference's package (its directory is
// named after the reference).
func bundleCatalog(b *catalog.Bundle, ref Reference, where string) (*catalog.Catalog, error) {
	if b.Package != ref.Name {
		return nil, ruleErr("package-not-found", "name the reference after the bundle's package",
			diag.InvalidError(fmt.Errorf("%s is a bundle of package %q, not %q", where, b.Package, ref.Name)))
	}
	return &catalog.Catalog{Bundles: []*catalog.Bundle{b}}, nil
}

// progress reports finished references.
type progress struct {
	w     io.Writer
	total int
	mu    sync.Mutex
	count int
}

func (p *progress) done(out Rendered, ref Reference, err error, took time.Duration) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.count++
	status := fmt.Sprintf("rendered %s in %s", out.Kind, took.Round(time.Millisecond))
	switch {
	case err != nil:
		status = "FAILED: " + err.Error()
	case out.Cached:
		status = fmt.Sprintf("%s from the cache (%s)", out.Kind, out.Digest)
	}
	fmt.Fprintf(p.w, "render [%d/%d] %s (%s): %s\n", p.count, p.total, ref.Name, ref.Image, status)
}
