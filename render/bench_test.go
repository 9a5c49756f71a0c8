package render

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// BenchmarkRender renders 20 references, each a per-package index image of a real package of the
// composed-279 catalog, served by the in-process registry: cold (empty cache, every image pulled and
// unpacked) and warm (digest-pinned references, every render from the cache, no registry request); and
// the writing of the 20 index.yaml files, which both share.
func BenchmarkRender(b *testing.B) {
	root := shareddata.Dir(b, "catalogs", "composed-279")
	entries, err := os.ReadDir(root)
	if err != nil {
		b.Fatal(err)
	}
	reg := newTestRegistry(b)
	var refs []Reference
	for _, e := range entries[:20] {
		data, err := os.ReadFile(filepath.Join(root, e.Name(), "catalog.json"))
		if err != nil {
			b.Fatal(err)
		}
		_, digest := reg.push(b, "bench/"+e.Name()+":v1", indexImage(b, map[string]string{e.Name() + "/catalog.json": string(data)}))
		refs = append(refs, Reference{Name: e.Name(), Image: digest})
	}
	cfg := config(b, "catalog", refs...)
	render := func(b *testing.B, opts Options) *Output {
		out, ds, err := Render(context.Background(), cfg, opts)
		if err != nil || len(out.References) != 20 {
			b.Fatalf("%v %v", err, ds)
		}
		return out
	}
	b.Run("cold", func(b *testing.B) {
		reg.requests.Store(0)
		for b.Loop() {
			b.StopTimer()
			opts := Options{CacheDir: b.TempDir()}
			b.StartTimer()
			render(b, opts)
		}
		b.ReportMetric(float64(reg.requests.Load())/float64(b.N), "requests/op")
	})
	opts := Options{CacheDir: b.TempDir()}
	out := render(b, opts)
	b.Run("warm", func(b *testing.B) {
		reg.requests.Store(0)
		for b.Loop() {
			render(b, opts)
		}
		if n := reg.requests.Load(); n != 0 {
			b.Fatalf("warm runs made %d registry requests", n)
		}
		b.ReportMetric(0, "requests/op")
	})
	b.Run("write-yaml", func(b *testing.B) {
		dir := b.TempDir()
		for b.Loop() {
			if err := out.Write(dir, "yaml"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
