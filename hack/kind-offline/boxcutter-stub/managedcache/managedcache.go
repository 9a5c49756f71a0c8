// Package managedcache: the cache operator-controller's Helm runtime (OLM v1's standard feature set) asks
// for at start. TrackingCache is a working controller-runtime cache whose per-owner watches are not
// started: Watch and Free do nothing and Source emits no events. The one effect is that drift detection
// (re-applying a release's objects when someone edits them in the cluster) is off; installs and upgrades
// are unaffected, which is all catalogbot's smoke install needs.
package managedcache

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// TrackingCache is a cache that also tracks which objects a user (an owner object) watches.
type TrackingCache interface {
	cache.Cache
	Source(h handler.EventHandler, predicates ...predicate.Predicate) source.Source
	Watch(ctx context.Context, user client.Object, gvks sets.Set[schema.GroupVersionKind]) error
	Free(ctx context.Context, user client.Object) error
}

type trackingCache struct {
	cache.Cache
	log logr.Logger
}

// NewTrackingCache returns a TrackingCache over controller-runtime's cache.New(cfg, opts).
func NewTrackingCache(log logr.Logger, cfg *rest.Config, opts cache.Options) (TrackingCache, error) {
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, fmt.Errorf("tracking cache: %w", err)
	}
	return &trackingCache{Cache: c, log: log}, nil
}

// Source is a source that never emits: no per-owner informers are started.
func (t *trackingCache) Source(handler.EventHandler, ...predicate.Predicate) source.Source {
	return source.Func(func(context.Context, workqueue.TypedRateLimitingInterface[reconcile.Request]) error { return nil })
}

// Watch records nothing: drift detection is off in this build.
func (t *trackingCache) Watch(_ context.Context, user client.Object, gvks sets.Set[schema.GroupVersionKind]) error {
	t.log.V(1).Info("drift detection is off in this build; not watching", "user", client.ObjectKeyFromObject(user).String(), "kinds", gvks.Len())
	return nil
}

// Free has nothing to release.
func (t *trackingCache) Free(context.Context, client.Object) error { return nil }
