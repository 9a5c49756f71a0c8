package template

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/render"
)

// countingRegistry is newRegistry's content behind a handler that counts manifest and blob requests.
func countingRegistry(t *testing.T, bundles ...string) (*registry, *atomic.Int64) {
	t.Helper()
	src := newRegistry(t, bundles...)
	var n atomic.Int64
	proxy := registrytest.New(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") || strings.Contains(r.URL.Path, "/blobs/") {
				n.Add(1)
			}
			req, _ := http.NewRequestWithContext(r.Context(), r.Method, src.URL+r.URL.Path, nil)
			req.Header = r.Header.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			buf := make([]byte, 32<<10)
			for {
				m, err := resp.Body.Read(buf)
				_, _ = w.Write(buf[:m])
				if err != nil {
					return
				}
			}
		})
	})
	out := &registry{Registry: proxy, tag: map[string]string{}, digest: map[string]string{}}
	for b := range src.tag {
		out.tag[b] = strings.Replace(src.tag[b], src.Host, proxy.Host, 1)
		out.digest[b] = strings.Replace(src.digest[b], src.Host, proxy.Host, 1)
	}
	return out, &n
}

// TestStoreRendersEachImageOnce renders a template twice with one store, then with a new store on the
// same disk directory: only the first render pulls.
func TestStoreRendersEachImageOnce(t *testing.T) {
	reg, requests := countingRegistry(t, "etcd/0.9.2", "etcd/0.9.4")
	text := []byte("schema: olm.semver\nstable:\n  bundles:\n  - image: " + reg.digest["etcd/0.9.2"] + "\n  - image: " + reg.digest["etcd/0.9.4"] + "\n")
	pull, err := render.NewBundleImages(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first := &Images{Store: NewStore(dir), Pull: pull}
	want, err := ours(t, first, text, Options{}, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if requests.Load() == 0 {
		t.Fatal("the first render made no registry request")
	}
	before := requests.Load()
	again, err := ours(t, first, text, Options{MigrateLevel: MigrateCSVMetadata}, "yaml")
	if err != nil || requests.Load() != before {
		t.Fatalf("a cached render asked the registry again (%d requests) or failed: %v", requests.Load()-before, err)
	}
	if string(again) == string(want) {
		t.Error("the migrated render is the plain one")
	}
	fromDisk := &Images{Store: NewStore(dir), Pull: pull}
	got, err := ours(t, fromDisk, text, Options{}, "yaml")
	if err != nil || requests.Load() != before || string(got) != string(want) {
		t.Errorf("a render from the disk cache asked the registry (%d requests), failed (%v) or differs", requests.Load()-before, err)
	}
}

// TestTagResolvedBeforeSeed seeds the store with a committed bundle under a tag, then moves the tag: an
// online render resolves the tag and renders what it names now; only offline is the committed render of
// the tag used.
func TestTagResolvedBeforeSeed(t *testing.T) {
	reg := newRegistry(t, "etcd/0.9.4")
	tag := reg.tag["etcd/0.9.4"]
	stale := &catalog.Bundle{Schema: catalog.SchemaBundle, Name: "etcdoperator.v0.0.1-stale", Package: "etcd", Image: tag,
		Properties: []catalog.Property{{Type: catalog.PropertyPackage, Value: []byte(`{"packageName":"etcd","version":"0.0.1"}`)}}}
	store := NewStore("")
	if err := store.Seed(&catalog.Catalog{Bundles: []*catalog.Bundle{stale}}, false); err != nil {
		t.Fatal(err)
	}
	pull, err := render.NewBundleImages(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The seeded bundle is in the olm.csv.metadata form (it has no olm.bundle.object), as in a catalog
	// from v4.17 on.
	text := []byte("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: " + tag + "\n")
	opts := Options{MigrateLevel: MigrateCSVMetadata}
	online, err := ours(t, &Images{Store: store, Pull: pull}, text, opts, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(online), "stale") || !strings.Contains(string(online), "etcdoperator.v0.9.4") {
		t.Errorf("online render used the seeded render of the tag:\n%.400s", online)
	}
	offline, err := ours(t, &Images{Store: store, Offline: true}, text, opts, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(offline), "etcdoperator.v0.0.1-stale") {
		t.Errorf("offline render did not use the committed render of the tag:\n%.400s", offline)
	}
}
