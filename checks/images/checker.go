package images

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sync/errgroup"

	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/registry"
)

const (
	defaultConcurrency = 8
	defaultTimeout     = 2 * time.Minute
)

// Checker verifies image references against their registries. The zero value is ready to use.
type Checker struct {
	// Concurrency bounds the registry requests in flight (default 8).
	Concurrency int
	// RemoteOptions are appended after the checker's own options. A remote.WithTransport here replaces
	// the transport that refuses plain HTTP to non-loopback hosts; remote.WithAuth conflicts with Keychain.
	RemoteOptions []remote.Option
	Policy        Policy
	// Keychain resolves registry credentials (default authn.DefaultKeychain: the docker config).
	Keychain authn.Keychain
	// Backoff paces retries of 5xx and 429 responses (default: 4 attempts, 1 s doubling).
	Backoff remote.Backoff
	// Timeout bounds the requests for one unique reference, retries included (default 2 minutes).
	Timeout time.Duration
}

// target is one unique image reference and every place it is used.
type target struct {
	ref  name.Reference
	uses []Ref
	out  outcome
}

// Check verifies refs and returns one diagnostic per use of each failing reference, sorted with
// diag.Sort. Each unique reference (by canonical name) costs one manifest HEAD, or with required
// platforms one manifest GET (plus a config blob GET for a single-platform image); layers are never read.
// References on a registry the policy does not allow are not requested.
//
// The error is non-nil, and marked diag.Infra, when some image could not be verified because a registry
// failed (its diagnostics carry rule registry-unavailable or image-check-failed); it is marked diag.Usage
// when the policy is malformed, and wraps ctx.Err() when ctx ends first.
func (c *Checker) Check(ctx context.Context, refs []Ref) ([]diag.Diagnostic, error) {
	pol, err := compilePolicy(c.Policy)
	if err != nil {
		return nil, diag.UsageError(err)
	}
	ds, targets := plan(refs, pol)
	if len(targets) > 0 {
		jobs := cmp.Or(max(c.Concurrency, 0), defaultConcurrency)
		p, err := c.newPuller(jobs)
		if err != nil {
			return nil, err
		}
		c.run(ctx, p, pol, targets, jobs)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("checking %d images: %w", len(targets), err)
		}
	}
	for _, t := range targets {
		for _, u := range t.uses {
			if d, ok := t.out.diagnostic(u, t.ref); ok {
				ds = append(ds, d)
			}
		}
	}
	return diag.Sort(ds), infraError(targets)
}

// plan applies the offline rules (syntax, digest pinning, allowed registries) and groups the remaining
// uses by canonical reference, in sorted order.
func plan(refs []Ref, pol *compiledPolicy) ([]diag.Diagnostic, []*target) {
	var ds []diag.Diagnostic
	byName := map[string]*target{}
	for _, u := range refs {
		ref, err := registry.ParseReference(u.Image)
		if err != nil {
			ds = append(ds, newDiag(u, RuleBadReference, fmt.Sprintf("invalid image reference %q (%s): %v", u.Image, u.Field, err),
				"write REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST"))
			continue
		}
		if _, pinned := ref.(name.Digest); pol.requireDigest && !pinned {
			ds = append(ds, newDiag(u, RuleNotDigestPinned, fmt.Sprintf("image %s (%s) is referenced by tag; the policy requires a digest", u.Image, u.Field),
				"pin it as REPOSITORY@sha256:DIGEST (for example with `crane digest`)"))
		}
		if !pol.allows(ref.Context()) {
			ds = append(ds, newDiag(u, RuleRegistryNotAllowed, fmt.Sprintf("image %s (%s) is on registry %s, which is not allowed (allowed: %s)",
				u.Image, u.Field, ref.Context().RegistryStr(), pol.allowed.List), "mirror the image to an allowed registry"))
			continue
		}
		t := byName[ref.Name()]
		if t == nil {
			t = &target{ref: ref}
			byName[ref.Name()] = t
		}
		t.uses = append(t.uses, u)
	}
	targets := make([]*target, 0, len(byName))
	for _, t := range byName {
		targets = append(targets, t)
	}
	slices.SortFunc(targets, func(a, b *target) int { return cmp.Compare(a.ref.Name(), b.ref.Name()) })
	return ds, targets
}

// run checks targets with at most jobs workers; it stops handing out work when ctx ends.
func (c *Checker) run(ctx context.Context, p *remote.Puller, pol *compiledPolicy, targets []*target, jobs int) {
	timeout := cmp.Or(c.Timeout, defaultTimeout)
	br := &breaker{down: map[string]string{}}
	var g errgroup.Group
	g.SetLimit(max(jobs, 1))
	for _, t := range targets {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			t.out = checkOne(ctx, p, pol, br, t.ref, timeout)
			return nil
		})
	}
	g.Wait()
}

// checkOne verifies one reference, unless its registry already proved unavailable during this Check.
func checkOne(ctx context.Context, p *remote.Puller, pol *compiledPolicy, br *breaker, ref name.Reference, timeout time.Duration) outcome {
	host := ref.Context().RegistryStr()
	if reason, down := br.isDown(host); down {
		return outcome{kind: kindUnavailable, reason: reason}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var out outcome
	if len(pol.platforms) == 0 {
		_, err := p.Head(ctx, ref)
		out = outcomeOf(err)
	} else {
		out = checkPlatforms(ctx, p, ref, pol.platforms)
	}
	if out.kind == kindUnavailable {
		br.markDown(host, out.reason)
	}
	return out
}

// breaker remembers registries that failed after retries, so a registry outage costs one round of
// retries rather than one per image.
type breaker struct {
	mu   sync.Mutex
	down map[string]string // host → reason
}

func (b *breaker) isDown(host string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r, ok := b.down[host]
	return r, ok
}

func (b *breaker) markDown(host, reason string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.down[host]; !ok {
		b.down[host] = reason
	}
}
