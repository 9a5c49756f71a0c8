package render

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// twoPackages is an index holding two real packages (rendered by opm for zncdatadev/kubedoop-catalog).
func twoPackages(t testing.TB) (files map[string]string, want map[string]string) {
	znc := zncCatalog(t)
	return map[string]string{
			"commons-operator/index.yaml":  znc["commons-operator"],
			"listener-operator/index.yaml": znc["listener-operator"],
		}, map[string]string{
			"commons-operator":  znc["commons-operator"],
			"listener-operator": znc["listener-operator"],
		}
}

func renderAndWrite(t *testing.T, cfg *Config, opts Options) (*Output, map[string]string) {
	t.Helper()
	out, ds, err := Render(context.Background(), cfg, opts)
	if err != nil {
		t.Fatalf("Render: %v\n%v", err, ds)
	}
	dir := t.TempDir()
	if err := out.Write(dir, "yaml"); err != nil {
		t.Fatal(err)
	}
	return out, readAll(t, dir)
}

func TestRenderIndexByTagAndDigest(t *testing.T) {
	reg := newTestRegistry(t)
	files, want := twoPackages(t)
	tag, digest := reg.push(t, "zncdatadev/catalog:latest", indexImage(t, files))
	cfg := config(t, "catalog",
		Reference{Name: "commons-operator", Image: tag},
		Reference{Name: "listener-operator", Image: digest})
	out, got := renderAndWrite(t, cfg, testOptions(t))
	if len(got) != 2 {
		t.Fatalf("want 2 files, got %v", sortedKeys(got))
	}
	for pkg, w := range want {
		// The files were written by opm render: rendering them back gives the same bytes.
		if g := got["catalog/"+pkg+"/index.yaml"]; g != w {
			d, _ := unifiedDiff("want", "got", []byte(w), []byte(g), 40)
			t.Errorf("%s differs from the opm-rendered file:\n%s", pkg, d)
		}
	}
	_, digestOnly, _ := strings.Cut(digest, "@")
	for i, r := range out.References {
		if r.Kind != IndexImage || r.Digest != digestOnly || r.Cached {
			t.Errorf("reference %d: kind %q digest %q cached %v, want index image %s not cached", i, r.Kind, r.Digest, r.Cached, digestOnly)
		}
	}
}

func TestRenderBundleImageMatchesBundleDir(t *testing.T) {
	dir := shareddata.Dir(t, "bundles", "kube-green", "0.7.1")
	reg := newTestRegistry(t)
	tag, _ := reg.push(t, "kube-green/bundle:v0.7.1", bundleImage(t, dir))
	out, got := renderAndWrite(t, config(t, "catalog", Reference{Name: "kube-green", Image: tag}), testOptions(t))
	b, err := bundle.RenderDir(context.Background(), dir, tag)
	if err != nil {
		t.Fatal(err)
	}
	wantBlob, _ := bundle.Marshal(b)
	gotBlob, _ := bundle.Marshal(out.References[0].Catalog.Bundles[0])
	if !bytes.Equal(gotBlob, wantBlob) {
		t.Errorf("bundle image renders differently from its directory:\n%s", first(unifiedDiff("dir", "image", wantBlob, gotBlob, 40)))
	}
	var want bytes.Buffer
	if err := catalog.WriteYAML(&want, &catalog.Catalog{Bundles: []*catalog.Bundle{b}}); err != nil {
		t.Fatal(err)
	}
	if got["catalog/kube-green/index.yaml"] != want.String() {
		t.Errorf("written file differs from catalog.WriteYAML of the bundle")
	}
	if out.References[0].Kind != BundleImage || out.References[0].Catalog.Bundles[0].Image != tag {
		t.Errorf("kind %q image %q, want bundle image with image %s", out.References[0].Kind, out.References[0].Catalog.Bundles[0].Image, tag)
	}
}

func first(s string, _ int) string { return s }

func TestRenderBundleDirectory(t *testing.T) {
	src := shareddata.Dir(t, "bundles", "etcd", "0.9.4")
	base := t.TempDir()
	if err := os.CopyFS(filepath.Join(base, "bundles", "etcd"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	b, err := bundle.RenderDir(context.Background(), src, "")
	if err != nil {
		t.Fatal(err)
	}
	cfg := config(t, "catalog", Reference{Name: b.Package, Image: "./bundles/etcd"})
	opts := testOptions(t)
	opts.BaseDir = base
	out, got := renderAndWrite(t, cfg, opts)
	var want bytes.Buffer
	if err := catalog.WriteYAML(&want, &catalog.Catalog{Bundles: []*catalog.Bundle{b}}); err != nil {
		t.Fatal(err)
	}
	if got["catalog/"+b.Package+"/index.yaml"] != want.String() || out.References[0].Kind != BundleDir {
		t.Errorf("bundle directory: got kind %q and files %v", out.References[0].Kind, sortedKeys(got))
	}

	// A reference named after another package is refused rather than written under the wrong name.
	cfg = config(t, "catalog", Reference{Name: "not-etcd", Image: "./bundles/etcd"})
	_, ds, err := Render(context.Background(), cfg, opts)
	if err == nil || len(ds) != 1 || ds[0].Rule != "package-not-found" || !strings.Contains(err.Error(), `is a bundle of package "etcd"`) {
		t.Errorf("got %v %v", err, ds)
	}
}

func TestRenderDeterministicAndCached(t *testing.T) {
	reg := newTestRegistry(t)
	files, _ := twoPackages(t)
	_, digest := reg.push(t, "idx/catalog:v1", indexImage(t, files))
	bundleTag, _ := reg.push(t, "kube-green/bundle:v0.7.1", bundleImage(t, shareddata.Dir(t, "bundles", "kube-green", "0.7.1")))
	cfg := config(t, "catalog",
		Reference{Name: "commons-operator", Image: digest},
		Reference{Name: "listener-operator", Image: digest},
		Reference{Name: "kube-green", Image: bundleTag})
	opts := testOptions(t)
	_, cold := renderAndWrite(t, cfg, opts)
	_, again := renderAndWrite(t, cfg, Options{NoCache: true})

	reg.requests.Store(0)
	out, warm := renderAndWrite(t, cfg, opts)
	for _, run := range []map[string]string{again, warm} {
		if len(run) != 3 || !equalMaps(cold, run) {
			t.Fatalf("runs differ: %v vs %v", sortedKeys(cold), sortedKeys(run))
		}
	}
	for _, r := range out.References {
		if !r.Cached {
			t.Errorf("%s was not served from the cache", r.Reference.Name)
		}
	}
	// The digest-pinned references cost nothing; the tag is resolved once (a ping and one manifest
	// request), and its layers come from the cache.
	if n := reg.requests.Load(); n > 2 {
		t.Errorf("warm run made %d registry requests, want at most 2 (for the tag)", n)
	}

	reg.requests.Store(0)
	pinned := config(t, "catalog", Reference{Name: "commons-operator", Image: digest})
	renderAndWrite(t, pinned, opts)
	if n := reg.requests.Load(); n != 0 {
		t.Errorf("cache hit on a digest made %d registry requests, want 0", n)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestRenderMissingPackage(t *testing.T) {
	reg := newTestRegistry(t)
	files, _ := twoPackages(t)
	tag, _ := reg.push(t, "idx/catalog:v1", indexImage(t, files))
	cfg := config(t, "catalog", Reference{Name: "zookeeper-operator", Image: tag})
	out, ds, err := Render(context.Background(), cfg, testOptions(t))
	if out != nil || err == nil || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("got %v, %v", out, err)
	}
	if len(ds) != 1 || ds[0].Rule != "package-not-found" || ds[0].Line != 3 || ds[0].File != "catalog.yaml" {
		t.Fatalf("diagnostics: %v", ds)
	}
	for _, s := range []string{tag, `no package "zookeeper-operator"`, "commons-operator, listener-operator"} {
		if !strings.Contains(ds[0].Message, s) {
			t.Errorf("message %q does not mention %q", ds[0].Message, s)
		}
	}
}

func TestRenderRegistryFailures(t *testing.T) {
	reg := newTestRegistry(t)
	files, _ := twoPackages(t)
	tag, _ := reg.push(t, "idx/catalog:v1", indexImage(t, files))
	cfg := config(t, "catalog", Reference{Name: "commons-operator", Image: tag})
	opts := Options{NoCache: true, RemoteOptions: []remote.Option{fastRetry}}

	t.Run("500 twice then success", func(t *testing.T) {
		reg.failNext(2, 500, isManifest)
		defer reg.failNext(0, 0, nil)
		if _, ds, err := Render(context.Background(), cfg, opts); err != nil {
			t.Fatalf("want the retry to succeed: %v %v", err, ds)
		}
		if reg.pending() != 0 {
			t.Fatalf("the faults were not hit")
		}
	})
	t.Run("429 then success", func(t *testing.T) {
		reg.failNext(1, 429, nil)
		defer reg.failNext(0, 0, nil)
		if _, _, err := Render(context.Background(), cfg, opts); err != nil {
			t.Fatalf("want the retry to succeed: %v", err)
		}
		if reg.pending() != 0 {
			t.Fatalf("the fault was not hit")
		}
	})
	t.Run("503 forever", func(t *testing.T) {
		reg.failNext(-1, 503, nil)
		defer reg.failNext(0, 0, nil)
		_, ds, err := Render(context.Background(), cfg, opts)
		if diag.CategoryOf(err) != diag.Infra || len(ds) != 1 || ds[0].Rule != "registry-unavailable" {
			t.Fatalf("want an infrastructure error, got %v (%s) %v", err, diag.CategoryOf(err), ds)
		}
		t.Log(ds[0])
	})
	t.Run("404", func(t *testing.T) {
		missing := config(t, "catalog", Reference{Name: "commons-operator", Image: reg.Host + "/idx/nothing:v1"})
		_, ds, err := Render(context.Background(), missing, opts)
		if diag.CategoryOf(err) != diag.Invalid || len(ds) != 1 || ds[0].Rule != "image-not-found" ||
			!strings.Contains(err.Error(), "image "+reg.Host+"/idx/nothing:v1: not found: ") {
			t.Fatalf("want image not found, got %v (%s) %v", err, diag.CategoryOf(err), ds)
		}
		t.Log(ds[0])
	})
	t.Run("401", func(t *testing.T) {
		reg.failNext(-1, 401, isManifest)
		defer reg.failNext(0, 0, nil)
		_, ds, err := Render(context.Background(), cfg, opts)
		if diag.CategoryOf(err) != diag.Usage || len(ds) != 1 || ds[0].Rule != "image-unauthorized" {
			t.Fatalf("want a usage error, got %v (%s) %v", err, diag.CategoryOf(err), ds)
		}
	})
	t.Run("truncated blob", func(t *testing.T) {
		reg.mu.Lock()
		reg.truncate = true
		reg.mu.Unlock()
		defer func() {
			reg.mu.Lock()
			reg.truncate = false
			reg.mu.Unlock()
		}()
		_, ds, err := Render(context.Background(), cfg, opts)
		if diag.CategoryOf(err) != diag.Infra || len(ds) != 1 || ds[0].Rule != "registry-unavailable" {
			t.Fatalf("want an infrastructure error, got %v (%s) %v", err, diag.CategoryOf(err), ds)
		}
		t.Log(ds[0])
	})
	t.Run("blob 500 forever", func(t *testing.T) {
		reg.failNext(-1, 500, func(r *http.Request) bool { return strings.Contains(r.URL.Path, "/blobs/") })
		defer reg.failNext(0, 0, nil)
		_, _, err := Render(context.Background(), cfg, opts)
		if diag.CategoryOf(err) != diag.Infra {
			t.Fatalf("want an infrastructure error, got %v (%s)", err, diag.CategoryOf(err))
		}
	})
}

func TestRenderRefusesConfigWithErrors(t *testing.T) {
	file := filepath.Join(shareddata.Dir(t, "refconfigs", "zncdatadev-kubedoop-catalog"), "catalog-template.yaml@af13ed5")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := ParseConfig(data, "catalog-template.yaml")
	out, ds, err := Render(context.Background(), cfg, Options{NoCache: true})
	if out != nil || err == nil || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("want a refusal, got %v %v", out, err)
	}
	if len(ds) != 1 || ds[0].Rule != "config-duplicate-reference" || ds[0].Line != 13 {
		t.Fatalf("diagnostics: %v", ds)
	}
	// A config built in code gets the same check.
	_, ds, err = Render(context.Background(), &Config{Name: "c", References: []Reference{{Name: "a", Image: "./x"}, {Name: "a", Image: "./y"}}}, Options{NoCache: true})
	if err == nil || len(ds) != 1 || ds[0].Rule != "config-duplicate-reference" {
		t.Fatalf("hand-made config: %v %v", err, ds)
	}
}

func TestRenderMultiArchIndex(t *testing.T) {
	reg := newTestRegistry(t)
	files, want := twoPackages(t)
	amd := indexImage(t, files)
	arm := indexImage(t, map[string]string{"commons-operator/index.yaml": "---\nschema: olm.package\nname: commons-operator\ndefaultChannel: arm\n"})
	idx := mutate.AppendManifests(empty.Index,
		mutate.IndexAddendum{Add: arm, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}},
		mutate.IndexAddendum{Add: amd, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}}})
	ref, err := name.ParseReference(reg.Host + "/multi/catalog:v1")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	cfg := config(t, "catalog", Reference{Name: "commons-operator", Image: ref.String()})
	_, got := renderAndWrite(t, cfg, testOptions(t))
	if got["catalog/commons-operator/index.yaml"] != want["commons-operator"] {
		t.Errorf("the linux/amd64 image was not the one rendered")
	}
	opts := testOptions(t)
	opts.Platform = &v1.Platform{OS: "linux", Architecture: "arm64"}
	_, got = renderAndWrite(t, cfg, opts)
	if !strings.Contains(got["catalog/commons-operator/index.yaml"], "defaultChannel: arm") {
		t.Errorf("Options.Platform was not followed")
	}
	opts.Platform = &v1.Platform{OS: "linux", Architecture: "s390x"}
	_, ds, err := Render(context.Background(), cfg, opts)
	if diag.CategoryOf(err) != diag.Invalid || len(ds) != 1 || ds[0].Rule != "image-unusable" || !strings.Contains(ds[0].Message, "s390x") {
		t.Errorf("missing platform: %v %v", err, ds)
	}
}

func TestRenderImageKinds(t *testing.T) {
	reg := newTestRegistry(t)
	content := layer(t, tarEntry{name: "configs/demo/index.yaml", body: pkgBlob})
	cases := []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"no labels", nil, "image type could not be determined: image has no labels"},
		{"other labels", map[string]string{"maintainer": "me", "a": "b"}, "image type could not be determined, found labels a=b, maintainer=me"},
		{"sqlite index", map[string]string{LabelDatabase: "/database/index.db"}, "sqlite-based index images"},
		{"helm bundle", map[string]string{LabelMediatype: "helm"}, `bundle format operators.operatorframework.io.bundle.mediatype.v1="helm" is not supported`},
		{"configs label on an empty directory", map[string]string{LabelConfigs: "/catalog"}, "has no files under /catalog"},
		{"configs label naming the root", map[string]string{LabelConfigs: "/"}, "names the image root"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tag, _ := reg.push(t, "kinds/image"+string(rune('a'+i))+":v1", image(t, c.labels, content))
			_, ds, err := Render(context.Background(), config(t, "catalog", Reference{Name: "demo", Image: tag}), testOptions(t))
			if diag.CategoryOf(err) != diag.Invalid || len(ds) != 1 || ds[0].Rule != "image-unusable" || !strings.Contains(ds[0].Message, c.want) {
				t.Errorf("got %v %v, want %q", err, ds, c.want)
			}
		})
	}
}

func TestRenderProgress(t *testing.T) {
	reg := newTestRegistry(t)
	znc := zncCatalog(t)
	var refs []Reference
	for _, pkg := range sortedKeys(znc)[:6] {
		tag, _ := reg.push(t, pkg+"/catalog:v1", indexImage(t, map[string]string{pkg + "/index.yaml": znc[pkg]}))
		refs = append(refs, Reference{Name: pkg, Image: tag})
	}
	var buf bytes.Buffer
	opts := testOptions(t)
	opts.Progress = &buf
	if _, _, err := Render(context.Background(), config(t, "catalog", refs...), opts); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[5], "render [6/6] ") {
		t.Fatalf("progress:\n%s", buf.String())
	}
	buf.Reset()
	if _, _, err := Render(context.Background(), config(t, "catalog", refs[:2]...), opts); err != nil || buf.Len() != 0 {
		t.Fatalf("a short run printed progress: %q %v", buf.String(), err)
	}
}

func TestWriteIsAtomic(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "catalog", "stale", "index.yaml")
	if err := os.MkdirAll(filepath.Dir(old), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := &catalog.Catalog{Packages: []*catalog.Package{{Schema: catalog.SchemaPackage, Name: "p", DefaultChannel: "c"}}}
	bad := &catalog.Catalog{Others: []*catalog.Meta{{Schema: "x.y", Package: "p", Blob: []byte("{not json")}}}
	out := &Output{Name: "catalog", References: []Rendered{{Reference: Reference{Name: "p"}, Catalog: good}, {Reference: Reference{Name: "q"}, Catalog: bad}}}
	if err := out.Write(dir, "yaml"); err == nil {
		t.Fatal("want the broken blob to fail the write")
	}
	if got := readAll(t, dir); len(got) != 1 || got["catalog/stale/index.yaml"] != "old\n" {
		t.Fatalf("a failed write changed the directory: %v", sortedKeys(got))
	}
	out.References = out.References[:1]
	if err := out.Write(dir, "json"); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, dir)
	want := "{\n    \"schema\": \"olm.package\",\n    \"name\": \"p\",\n    \"defaultChannel\": \"c\"\n}\n"
	if len(got) != 1 || got["catalog/p/index.json"] != want {
		t.Fatalf("got %q", got)
	}
	if err := out.Write(dir, "toml"); diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("unknown format: %v", err)
	}
	escape := &Output{Name: "..", References: out.References}
	if err := escape.Write(dir, "yaml"); diag.CategoryOf(err) != diag.Usage {
		t.Fatalf("name \"..\": %v", err)
	}
}

func TestTagResolvedAndImagePulledOncePerRun(t *testing.T) {
	reg := newTestRegistry(t)
	files, _ := twoPackages(t)
	tag, _ := reg.push(t, "idx/catalog:v1", indexImage(t, files))
	var mu sync.Mutex
	paths := map[string]int{}
	reg.mu.Lock()
	reg.observe = func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		paths[r.Method+" "+r.URL.Path]++
	}
	reg.mu.Unlock()
	cfg := config(t, "catalog",
		Reference{Name: "commons-operator", Image: tag},
		Reference{Name: "listener-operator", Image: tag})
	if _, _, err := Render(context.Background(), cfg, Options{NoCache: true}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for p, n := range paths {
		if n != 1 && p != "GET /v2/" {
			t.Errorf("%s requested %d times", p, n)
		}
	}
	if paths["GET /v2/idx/catalog/manifests/v1"] != 1 {
		t.Errorf("the tag was not resolved with one request: %v", paths)
	}
}

func TestRenderCatalogDirectory(t *testing.T) {
	files, want := twoPackages(t)
	base := t.TempDir()
	for p, content := range files {
		f := filepath.Join(base, "fbc", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := config(t, "catalog", Reference{Name: "listener-operator", Image: "./fbc"})
	opts := testOptions(t)
	opts.BaseDir = base
	out, got := renderAndWrite(t, cfg, opts)
	if out.References[0].Kind != CatalogDir || got["catalog/listener-operator/index.yaml"] != want["listener-operator"] {
		t.Errorf("catalog directory: kind %q, files %v", out.References[0].Kind, sortedKeys(got))
	}
	missing := config(t, "catalog", Reference{Name: "x", Image: "./nowhere"})
	if _, ds, err := Render(context.Background(), missing, opts); err == nil || len(ds) != 1 || ds[0].Rule != "directory-not-found" {
		t.Errorf("missing directory: %v %v", err, ds)
	}
}

func TestRenderCanceled(t *testing.T) {
	reg := newTestRegistry(t)
	files, _ := twoPackages(t)
	tag, _ := reg.push(t, "idx/catalog:v1", indexImage(t, files))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Render(ctx, config(t, "catalog", Reference{Name: "commons-operator", Image: tag}), Options{NoCache: true})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}
