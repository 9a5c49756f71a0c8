package template

import (
	"context"
	"net/http"
	"strings"
	"sync"
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
	out := &registry{tag: map[string]string{}, digest: map[string]string{}}
	proxy := registrytest.New(t, func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") || strings.Contains(r.URL.Path, "/blobs/") {
				n.Add(1)
			}
			if out.observe != nil {
				out.observe(r.URL.Path)
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
	out.Registry = proxy
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
	store, pull := staleSeed(t, tag)
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

// TestDriftGateResolvesOnlyWhatTheChangeAdds: in the drift gate (SeededTags), a tag the trusted
// committed catalogs hold is rendered as committed and never resolved, so a registry outage is reported
// on the bundle the change adds, not on an untouched one, and a tag moved since it was committed does
// not fail a change that does not touch it. Only the added tag reaches a registry.
func TestDriftGateResolvesOnlyWhatTheChangeAdds(t *testing.T) {
	reg := newRegistry(t, "etcd/0.9.4", "etcd/0.9.2")
	untouched := reg.tag["etcd/0.9.4"] // committed, and moved since: the seed holds an older render
	store, pull := staleSeed(t, untouched)
	opts := Options{MigrateLevel: MigrateCSVMetadata}
	gate := &Images{Store: store, Pull: pull, SeededTags: true}
	tmpl := func(added string) []byte {
		return []byte("schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: " + untouched + "\n- schema: olm.bundle\n  image: " + added + "\n")
	}

	down := "127.0.0.1:1/gone/etcd-bundle:v0.0.3"
	_, err := Render(context.Background(), tmpl(down), "operators/etcd/catalog-templates/t.yaml", gate, opts)
	results := []Result{{Job: Job{Package: "etcd", CI: "operators/etcd/ci.yaml", Catalog: Catalog{Name: "v4.20", Dir: "catalogs/v4.20"}}, Err: err}}
	ds := Diagnostics(t.TempDir(), results, false)
	if len(ds) != 1 || !ds[0].IsInfra() || !strings.Contains(ds[0].Message, down) || strings.Contains(ds[0].Message, untouched) || ds[0].Line != 6 {
		t.Fatalf("want one registry-unavailable diagnostic on line 6 naming the added %s only: %+v", down, ds)
	}
	if InfraErr(results) == nil {
		t.Error("an outage must be an error of the infrastructure, not the author's")
	}

	out, err := ours(t, gate, tmpl(reg.tag["etcd/0.9.2"]), opts, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "etcdoperator.v0.0.1-stale") || !strings.Contains(string(out), "etcdoperator.v0.9.2") || strings.Contains(string(out), "etcdoperator.v0.9.4") {
		t.Errorf("the gate resolved the untouched tag again, or not the added one:\n%.600s", out)
	}
}

// TestSeededBundlesAreNotPulled renders, online, a template naming a bundle of the committed catalogs
// (which the registry does not even have) and a new one: only the new one is asked for.
func TestSeededBundlesAreNotPulled(t *testing.T) {
	reg, requests := countingRegistry(t, "etcd/0.9.4")
	pull, err := render.NewBundleImages(render.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Render 0.9.2 once elsewhere, and commit it as the base branch would have.
	other := newRegistry(t, "etcd/0.9.2")
	committed, err := (&Images{Store: NewStore(""), Pull: pull}).Bundle(context.Background(), other.digest["etcd/0.9.2"], false)
	if err != nil {
		t.Fatal(err)
	}
	// Committed under a reference to the counting registry, which does not have it: pulling it would
	// show there and fail.
	digest := other.digest["etcd/0.9.2"][strings.LastIndex(other.digest["etcd/0.9.2"], "@")+1:]
	seeded := reg.Host + "/bundles/etcd@" + digest
	committed.Image = seeded
	store := NewStore("")
	if err := store.Seed(&catalog.Catalog{Bundles: []*catalog.Bundle{committed.Bundle}}, false); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	reg.observe = func(path string) { mu.Lock(); seen = append(seen, path); mu.Unlock() }
	text := []byte("schema: olm.template.basic\nentries:\n- {schema: olm.bundle, image: " + seeded + "}\n- {schema: olm.bundle, image: " + reg.digest["etcd/0.9.4"] + "}\n")
	out, err := ours(t, &Images{Store: store, Pull: pull}, text, Options{}, "yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "etcdoperator.v0.9.2") || !strings.Contains(string(out), "etcdoperator.v0.9.4") {
		t.Errorf("render lacks a bundle:\n%.300s", out)
	}
	if requests.Load() == 0 {
		t.Error("the new bundle was not pulled")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range seen {
		if strings.Contains(p, digest) {
			t.Errorf("the committed bundle was asked for: %s", p)
		}
	}
}

// staleSeed is a store seeded with an older render of the bundle at tag (etcdoperator.v0.0.1-stale, as a
// committed catalog holds it after the tag moved), and a bundle puller.
func staleSeed(t *testing.T, tag string) (*Store, *render.BundleImages) {
	t.Helper()
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
	return store, pull
}
