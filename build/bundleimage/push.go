package bundleimage

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/registry"
)

// DefaultTimeout bounds a whole Push (every request and retry) when WithTimeout is not given.
const DefaultTimeout = 5 * time.Minute

// requestTimeout bounds one registry request of a push, its body included (a bundle layer is small).
const requestTimeout = 2 * time.Minute

// Option configures Push.
type Option func(*options)

type options struct {
	transport http.RoundTripper
	keychain  authn.Keychain
	retry     remote.Backoff
	timeout   time.Duration
	names     []name.Option
	repo      string
	remote    []remote.Option
}

// WithTransport carries the registry requests (default registry.Transport with a 2-minute bound per
// request: plain HTTP only to loopback, 8 s for an answer's headers).
func WithTransport(t http.RoundTripper) Option { return func(o *options) { o.transport = t } }

// WithKeychain resolves registry credentials (default authn.DefaultKeychain, the docker config).
func WithKeychain(k authn.Keychain) Option { return func(o *options) { o.keychain = k } }

// WithRetry is the back-off of requests failing with registry.RetryStatusCodes (5xx, 429) or a network
// error (default registry.DefaultBackoff).
func WithRetry(b remote.Backoff) Option { return func(o *options) { o.retry = b } }

// WithTimeout bounds the whole push, retries included (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithNameOptions parse ref (name.Insecure: a plain-HTTP registry; the transport still allows plain
// HTTP to loopback only).
func WithNameOptions(opts ...name.Option) Option {
	return func(o *options) { o.names = append(o.names, opts...) }
}

// WithRemoteOptions are applied to every registry request of the push last, over the options above (the
// App's per-job transport, deadlines and credentials of the repository it releases for).
func WithRemoteOptions(opts ...remote.Option) Option {
	return func(o *options) { o.remote = append(o.remote, opts...) }
}

// WithRepository makes Push's dir a slash path relative to the repository root repo
// (operators/<package>/<version>), opened through an os.Root of repo: a symbolic link on the way (the
// bundle directory, or its package's, linked to another package's bundle or out of the repository) is
// refused, not followed.
func WithRepository(repo string) Option { return func(o *options) { o.repo = repo } }

// Push builds the bundle image of dir and pushes it to ref: by digest first, then (ref being a tag) the
// tag is set to it, unless the tag holds another image already (a released bundle image is never
// replaced: the catalogs naming the tag would change under their readers; diag.InvalidError). Pushing
// the same directory again is a no-op that returns the same digest. It returns the digest reference ("registry/repo@sha256:..."). A ref that is not an
// image reference is a usage error; the bundle directory's problems are diag.InvalidError; a registry
// that fails (5xx and 429 after retries, refusals, no answer within the deadline) is diag.InfraError
// naming ref. Until Push returns without error, nothing may name ref.
func Push(ctx context.Context, dir string, ref string, opts ...Option) (digestRef string, err error) {
	o := options{timeout: DefaultTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if o.transport == nil {
		o.transport = registry.Transport(requestTimeout)
	}
	target, err := name.ParseReference(ref, append([]name.Option{name.StrictValidation}, o.names...)...)
	if err != nil {
		return "", diag.UsageError(fmt.Errorf("bundle image %q is not an image reference: %w", ref, err))
	}
	img, err := buildDir(ctx, o.repo, dir)
	if err != nil {
		return "", fmt.Errorf("building bundle image %s: %w", ref, err)
	}
	pctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	h, err := img.Digest()
	if err != nil {
		return "", fmt.Errorf("bundle image %s: %w", ref, err)
	}
	bopts := build.Options{Transport: o.transport, Keychain: o.keychain, Retry: o.retry, RemoteOptions: o.remote}
	if tag, ok := target.(name.Tag); ok {
		bopts.BeforeTag = func(ctx context.Context) error { return tagFree(ctx, tag, h, o) }
	}
	d, err := build.Push(pctx, build.Result{Image: img}, target, bopts)
	if err != nil {
		if errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("no success within %s: %w", o.timeout, err)
		}
		if diag.CategoryOf(err) == diag.Internal {
			err = diag.InfraError(err)
		}
		return "", fmt.Errorf("pushing bundle image %s: %w", ref, err)
	}
	return d.String(), nil
}

// buildDir is Build of dir, or of dir under repo (WithRepository) when repo is set.
func buildDir(ctx context.Context, repo, dir string) (v1.Image, error) {
	if repo == "" {
		return Build(ctx, dir)
	}
	root, err := os.OpenRoot(repo)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("repository %s: %w", repo, err))
	}
	defer root.Close()
	rel := path.Clean(filepath.ToSlash(dir))
	if link, ok := filetree.LinkOn(root, rel); ok {
		return nil, diag.InvalidError(fmt.Errorf("bundle directory %s: %s is a symbolic link: a bundle directory is a real directory of the repository", rel, link))
	}
	sub, err := root.OpenRoot(filepath.FromSlash(rel))
	if err != nil {
		return nil, diag.InvalidError(fmt.Errorf("bundle directory %s: %w", rel, err))
	}
	defer sub.Close()
	img, err := BuildFS(ctx, sub.FS())
	if err != nil {
		return nil, fmt.Errorf("bundle directory %s: %w", rel, err)
	}
	return img, nil
}

// tagFree says whether tag may be set to digest h: it does not exist, or holds h already.
func tagFree(ctx context.Context, tag name.Tag, h v1.Hash, o options) error {
	ropts := append(registry.Options(o.keychain, o.retry), remote.WithContext(ctx), remote.WithTransport(o.transport))
	ropts = append(ropts, o.remote...)
	desc, err := remote.Head(tag, ropts...)
	var te *transport.Error
	switch {
	case errors.As(err, &te) && te.StatusCode == http.StatusNotFound:
		return nil
	case err != nil:
		return diag.InfraError(fmt.Errorf("reading tag %s: %w", tag, err))
	case desc.Digest != h:
		return diag.InvalidError(fmt.Errorf("tag %s holds another image (%s) already: a released bundle image is not replaced; release a new version", tag, desc.Digest))
	}
	return nil
}
