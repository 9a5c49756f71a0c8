package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

// registries is one run's access to registries: one puller (connections and tokens are reused), each tag
// resolved once, each image read once.
type registries struct {
	opts []remote.Option

	mu     sync.Mutex
	tags   map[string]*once[*remote.Descriptor]
	images map[string]*once[*pulled]
}

// once computes a value a single time for every goroutine that asks.
type once[T any] struct {
	sync.Once
	val T
	err error
}

func (o *once[T]) get(f func() (T, error)) (T, error) {
	o.Do(func() { o.val, o.err = f() })
	return o.val, o.err
}

func newRegistries(platform v1.Platform, opts []remote.Option) (*registries, error) {
	base := append(registry.Options(nil, remote.Backoff{}), remote.WithPlatform(platform))
	base = append(base, opts...)
	p, err := remote.NewPuller(base...)
	if err != nil {
		return nil, diag.UsageError(fmt.Errorf("registry options: %w", err))
	}
	return &registries{
		opts:   append(base, remote.Reuse(p)),
		tags:   map[string]*once[*remote.Descriptor]{},
		images: map[string]*once[*pulled]{},
	}, nil
}

// parseImage parses an image reference; registries on loopback may be plain HTTP, no other.
func parseImage(s string) (name.Reference, error) {
	ref, err := registry.ParseReference(s)
	if err != nil {
		return nil, diag.InvalidError(fmt.Errorf("image %q: %w", s, err))
	}
	return ref, nil
}

// resolve returns the manifest digest ref points to. A tag is asked for once per run; a digest is taken
// as written, without a request.
func (r *registries) resolve(ctx context.Context, ref name.Reference) (name.Digest, *remote.Descriptor, error) {
	if d, ok := ref.(name.Digest); ok {
		return d, nil, nil
	}
	r.mu.Lock()
	o := r.tags[ref.Name()]
	if o == nil {
		o = &once[*remote.Descriptor]{}
		r.tags[ref.Name()] = o
	}
	r.mu.Unlock()
	desc, err := o.get(func() (*remote.Descriptor, error) {
		return remote.Get(ref, r.with(ctx)...)
	})
	if err != nil {
		return name.Digest{}, nil, classify(err)
	}
	return ref.Context().Digest(desc.Digest.String()), desc, nil
}

func (r *registries) with(ctx context.Context) []remote.Option {
	return append(r.opts[:len(r.opts):len(r.opts)], remote.WithContext(ctx))
}

// image fetches the image at d (desc when already fetched) once per run and unpacks what Render needs.
func (r *registries) image(ctx context.Context, d name.Digest, desc *remote.Descriptor, lim limits) (*pulled, error) {
	r.mu.Lock()
	o := r.images[d.Name()]
	if o == nil {
		o = &once[*pulled]{}
		r.images[d.Name()] = o
	}
	r.mu.Unlock()
	return o.get(func() (*pulled, error) {
		if desc == nil {
			var err error
			if desc, err = remote.Get(d, r.with(ctx)...); err != nil {
				return nil, classify(err)
			}
		}
		img, err := desc.Image()
		if err != nil {
			if isTransport(err) || isNetwork(err) {
				return nil, classify(err)
			}
			return nil, ruleErr("image-unusable", "", diag.InvalidError(err))
		}
		p, err := pull(ctx, img, lim)
		return p, classify(err)
	})
}

func isTransport(err error) bool {
	var te *transport.Error
	return errors.As(err, &te)
}

func isNetwork(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF)
}

// classify marks a registry error with whose fault it is: a missing image is the reference's, missing
// credentials the user's setup, anything else (5xx after retries, 429, network) the infrastructure's.
// Errors already marked are returned as they are. Messages do not name the image: callers do.
func classify(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if diag.CategoryOf(err) != diag.Internal {
		return err
	}
	var te *transport.Error
	if errors.As(err, &te) {
		blob := te.Request != nil && strings.Contains(te.Request.URL.Path, "/blobs/")
		switch {
		case (te.StatusCode == http.StatusNotFound || hasCode(te, transport.ManifestUnknownErrorCode, transport.NameUnknownErrorCode)) && !blob:
			return ruleErr("image-not-found", "check the image reference: the registry has no such repository, tag or digest",
				diag.InvalidError(fmt.Errorf("not found: %w", err)))
		case te.StatusCode == http.StatusUnauthorized || te.StatusCode == http.StatusForbidden ||
			hasCode(te, transport.UnauthorizedErrorCode, transport.DeniedErrorCode):
			return ruleErr("image-unauthorized", "log in to the registry (docker login or podman login write the credentials catalogbot reads)",
				diag.UsageError(fmt.Errorf("access denied: %w", err)))
		}
	}
	return ruleErr("registry-unavailable", "the registry failed; this is not a problem of the catalog: retry later",
		diag.InfraError(fmt.Errorf("registry error: %w", err)))
}

func hasCode(te *transport.Error, codes ...transport.ErrorCode) bool {
	for _, d := range te.Errors {
		for _, c := range codes {
			if d.Code == c {
				return true
			}
		}
	}
	return false
}
