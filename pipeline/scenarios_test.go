package pipeline_test

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"text/template"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/gitrepo"
	goldenpkg "github.com/catalogbot/catalogbot/internal/golden"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render"
	"github.com/catalogbot/catalogbot/render/bundle"
	"github.com/catalogbot/catalogbot/report"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/scenarios")

// fastRetry keeps the registry-outage scenario quick: three tries, 1 ms apart (render's own backoff
// waits seconds).
var fastRetry = remote.WithRetryBackoff(remote.Backoff{Duration: time.Millisecond, Factor: 1, Steps: 3})

// TestMain gives the package a private user cache directory: the render stage caches renders there, and
// the scenarios' image digests change with every run (the registry's port is in the images).
func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "catalogbot-pipeline-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pipeline tests: cache directory:", err)
		os.Exit(1)
	}
	if err := os.Setenv("XDG_CACHE_HOME", dir); err != nil {
		fmt.Fprintln(os.Stderr, "pipeline tests: set XDG_CACHE_HOME:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The scenarios' repository: two packages, demo-operator (owned by alice) and other-operator (owned by
// bob); catalog-admin maintains everything; mallory owns nothing.
const (
	demoPkg  = "demo-operator"
	otherPkg = "other-operator"
)

const baseConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
catalog:
  dir: catalog
  format: json
maintainers: [catalog-admin]
owners:
  demo-operator: [alice]
  other-operator: [bob]
`

// scenario is one pull request: the base revision (main) and the head revision (a branch from it).
type scenario struct {
	name string
	// base and head return each revision's whole tree; head usually starts from base(w).
	base, head func(w *world) tree
	author     string
	approvers  []string
	// outage is a repository of the scenario registry that answers 503 to every request during the run.
	outage  string
	verdict report.Status
	exit    int
}

// tree is one revision: the catalog (written as catalog/<pkg>/catalog.json) and every other file.
type tree struct {
	catalog *catalog.Catalog
	// rendered, when set, is a references config whose render is committed under catalog/ instead of
	// catalog (catalog/<reference>/index.json, written by render.Render and Output.Write as catalogbot
	// render writes it).
	rendered string
	files    map[string]string
}

// with returns a copy of t with files set (an empty value deletes the file).
func (t tree) with(files map[string]string) tree {
	out := tree{catalog: t.catalog, rendered: t.rendered, files: map[string]string{}}
	for k, v := range t.files {
		out.files[k] = v
	}
	for k, v := range files {
		if v == "" {
			delete(out.files, k)
		} else {
			out.files[k] = v
		}
	}
	return out
}

func scenarios() []scenario {
	// mainTree is the usual base: both packages at v0.1.0, with the configuration given.
	mainTree := func(cfg string) func(w *world) tree {
		return func(w *world) tree {
			t := tree{catalog: merge(w.pkg(demoPkg, "0.1.0"), w.pkg(otherPkg, "0.1.0")), files: map[string]string{}}
			if cfg != "" {
				t.files[".catalogbot.yaml"] = cfg
			}
			return t
		}
	}
	// release adds demo-operator v0.2.0 (replacing v0.1.0) to a base.
	release := func(base func(w *world) tree) func(w *world) tree {
		return func(w *world) tree {
			t := base(w)
			t.catalog = merge(w.pkg(demoPkg, "0.1.0", "0.2.0"), w.pkg(otherPkg, "0.1.0"))
			return t
		}
	}
	// retag points the released demo-operator v0.1.0 at v0.2.0's image.
	retag := func(base func(w *world) tree) func(w *world) tree {
		return func(w *world) tree {
			t := base(w)
			demo := w.pkg(demoPkg, "0.1.0")
			demo.Bundles[0].Image = w.bundle(demoPkg, "0.2.0").Image
			t.catalog = merge(demo, w.pkg(otherPkg, "0.1.0"))
			return t
		}
	}
	std := mainTree(baseConfig)
	// withRefs is a references-based repository: catalog.yaml pins each package's index image by digest,
	// and catalog/ holds exactly what it renders (demo-operator and other-operator at v0.1.0).
	refsConfig := baseConfig + "references:\n  file: catalog.yaml\n"
	withRefs := func(w *world) tree {
		refs := w.refsFile("catalog", "0.1.0")
		return tree{rendered: refs, files: map[string]string{".catalogbot.yaml": refsConfig, "catalog.yaml": refs}}
	}
	// bumpRefs points demo-operator's reference at its v0.2.0 index image and commits the catalog it
	// renders, as catalogbot render writes it.
	bumpRefs := func(w *world) tree {
		t := withRefs(w).with(map[string]string{"catalog.yaml": w.refsFile("catalog", "0.1.0", "0.2.0")})
		t.rendered = t.files["catalog.yaml"]
		return t
	}
	ciConfig := baseConfig + "ownersFrom: operators/{package}/ci.yaml\n"
	withCI := func(w *world) tree {
		return std(w).with(map[string]string{".catalogbot.yaml": ciConfig,
			"operators/demo-operator/ci.yaml": "reviewers:\n- alice\n"})
	}
	return []scenario{
		{name: "allowed-change", base: std, head: release(std), author: "alice", verdict: report.Pass, exit: 0},
		{name: "forbidden-change", base: std, head: release(std), author: "mallory", verdict: report.Fail, exit: 1},
		{name: "owner-review-approves", base: std, head: release(std), author: "mallory", approvers: []string{"alice"},
			verdict: report.Pass, exit: 0},
		{name: "owner-change-config", base: std, author: "alice", verdict: report.Fail, exit: 1,
			head: func(w *world) tree {
				return std(w).with(map[string]string{".catalogbot.yaml": strings.Replace(baseConfig, "[bob]", "[bob, alice]", 1)})
			}},
		{name: "owner-change-ci-yaml", base: withCI, author: "alice", verdict: report.Fail, exit: 1,
			head: func(w *world) tree {
				return withCI(w).with(map[string]string{"operators/demo-operator/ci.yaml": "reviewers:\n- alice\n- mallory\n"})
			}},
		{name: "owner-change-by-maintainer", base: std, author: "catalog-admin", verdict: report.Pass, exit: 0,
			head: func(w *world) tree {
				return std(w).with(map[string]string{".catalogbot.yaml": strings.Replace(baseConfig, "[bob]", "[bob, alice]", 1)})
			}},
		{name: "config-broken-by-maintainer", base: std, author: "catalog-admin", verdict: report.Fail, exit: 1,
			// A maintainer may change the configuration, but not into one every later run would reject.
			head: func(w *world) tree {
				return std(w).with(map[string]string{".catalogbot.yaml": baseConfig + "maintainer: [x]\n"})
			}},
		{name: "smoke-without-cluster", author: "alice", verdict: report.ActionRequired, exit: 2,
			// smoke is enabled on the base, but this front-end was given no cluster to run it in
			base: mainTree(baseConfig + "smoke:\n  enabled: true\n"),
			head: release(mainTree(baseConfig + "smoke:\n  enabled: true\n"))},
		{name: "new-package-denied", base: std, head: newPackage, author: "alice", verdict: report.Fail, exit: 1},
		{name: "new-package-maintainer", base: std, head: newPackage, author: "catalog-admin", verdict: report.Pass, exit: 0},
		{name: "render-in-sync", base: withRefs, head: bumpRefs, author: "alice", verdict: report.Pass, exit: 0},
		{name: "drift", base: withRefs, author: "alice", verdict: report.Fail, exit: 1,
			// The references config now names v0.2.0, but the committed catalog was not rendered again.
			head: func(w *world) tree {
				return withRefs(w).with(map[string]string{"catalog.yaml": w.refsFile("catalog", "0.1.0", "0.2.0")})
			}},
		{name: "references-config-invalid", base: withRefs, author: "alice", verdict: report.Fail, exit: 1,
			head: func(w *world) tree {
				return withRefs(w).with(map[string]string{"catalog.yaml": w.refsFile("catalog", "0.1.0", "0.2.0") + "tags: [latest]\n"})
			}},
		{name: "references-name-mismatch", base: withRefs, author: "catalog-admin", verdict: report.ActionRequired, exit: 2,
			// The rendered catalog would be other/, not the catalog/ the validate stage checks.
			head: func(w *world) tree {
				return withRefs(w).with(map[string]string{"catalog.yaml": w.refsFile("other", "0.1.0")})
			}},
		{name: "render-registry-down", base: withRefs, head: bumpRefs, author: "alice", verdict: report.Error, exit: 3,
			outage: "scenarios/demo-operator-index"},
		{name: "invalid-catalog", base: std, author: "alice", verdict: report.Fail, exit: 1,
			// v0.2.0 is added without replacing v0.1.0: the channel has two heads.
			head: func(w *world) tree {
				t := std(w)
				demo := w.pkg(demoPkg, "0.1.0", "0.2.0")
				demo.Channels[0].Entries[1].Replaces = ""
				t.catalog = merge(demo, w.pkg(otherPkg, "0.1.0"))
				return t
			}},
		{name: "missing-image", base: std, author: "alice", verdict: report.Fail, exit: 1,
			head: func(w *world) tree {
				t := std(w)
				w.unpushed[w.key(demoPkg, "0.2.0")] = true
				t.catalog = merge(w.pkg(demoPkg, "0.1.0", "0.2.0"), w.pkg(otherPkg, "0.1.0"))
				return t
			}},
		{name: "modified-released-bundle", base: std, head: retag(std), author: "alice", verdict: report.Fail, exit: 1},
		{name: "images-registry-down", base: std, head: release(std), author: "alice", verdict: report.Error, exit: 3,
			outage: "scenarios/demo-operator-bundle"},
		{name: "broken-change-during-outage", base: std, author: "mallory", verdict: report.Fail, exit: 1,
			// owners, validate and graph fail while the bundles' registry is down: an outage does not
			// outrank a broken change (the images stage is still an error, listed as such).
			outage: "scenarios/demo-operator-bundle",
			head: func(w *world) tree {
				t := std(w)
				demo := w.pkg(demoPkg, "0.1.0", "0.2.0")
				demo.Channels[0].Entries[1].Replaces = ""
				demo.Bundles[0].Image = w.bundle(demoPkg, "0.2.0").Image
				// the same image in relatedImages too: two diagnostics on one line sort by message, and
				// different (random) digests would make their order change from run to run
				demo.Bundles[0].RelatedImages[0].Image = demo.Bundles[0].Image
				t.catalog = merge(demo, w.pkg(otherPkg, "0.1.0"))
				return t
			}},
		{name: "modified-released-bundle-allowed", base: mainTree(baseConfig + "graph:\n  allowModifyReleased: true\n"),
			head: retag(mainTree(baseConfig + "graph:\n  allowModifyReleased: true\n")), author: "alice", verdict: report.Pass, exit: 0},
		{name: "config-invalid-on-base", base: mainTree(baseConfig + "maintainer: [mallory]\n"),
			head: release(mainTree(baseConfig + "maintainer: [mallory]\n")), author: "alice", verdict: report.ActionRequired, exit: 2},
		{name: "no-config", base: mainTree(""), head: release(mainTree("")), author: "mallory", verdict: report.Pass, exit: 0},
	}
}

// newPackage adds a third package, new-operator, to the base tree.
func newPackage(w *world) tree {
	t := tree{catalog: merge(w.pkg(demoPkg, "0.1.0"), w.pkg(otherPkg, "0.1.0"), w.pkg("new-operator", "1.0.0")),
		files: map[string]string{".catalogbot.yaml": baseConfig}}
	return t
}

func TestScenarios(t *testing.T) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			w := newWorld(t)
			repoDir := filepath.Join(t.TempDir(), "repo")
			g := initRepo(t, repoDir)
			base := g.commit(ctx, t, sc.base(w), "base", "catalog-admin")
			g.branch(t, "pr", base)
			head := g.commit(ctx, t, sc.head(w), "change", sc.author)
			w.push(ctx, t)
			if sc.outage != "" {
				w.outage.Store(&sc.outage)
			}

			repo, err := gitrepo.Open(repoDir)
			if err != nil {
				t.Fatal(err)
			}
			r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: "pr", Author: sc.author, Approvers: sc.approvers,
				RemoteOptions: []remote.Option{fastRetry}})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			norm := w.normalizer(map[string]string{base.String(): "BASE_SHA", head.String(): "HEAD_SHA"}, repoDir)
			var text bytes.Buffer
			if err := report.WriteText(&text, r, report.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			md := report.Markdown(r, 0)
			// The head's checkout is a temporary directory, gone once Run returns: a report that names it
			// points maintainers at nothing (paths are repository-relative).
			checkout := "catalogbot-" + head.String()[:12] + "-"
			for _, line := range strings.Split(text.String()+md, "\n") {
				if i := strings.Index(line, checkout); i >= 0 {
					t.Errorf("the report names the temporary checkout of the head: ...%s...", line[max(0, i-20):min(len(line), i+80)])
				}
			}
			dir := filepath.Join("testdata", "scenarios", sc.name)
			golden(t, filepath.Join(dir, "want.txt"), norm(text.String()))
			golden(t, filepath.Join(dir, "want.md"), norm(md))
			if got := r.Verdict(); got != sc.verdict {
				t.Errorf("verdict = %s, want %s", got, sc.verdict)
			}
			if got := r.ExitCode(); got != sc.exit {
				t.Errorf("exit code = %d, want %d", got, sc.exit)
			}
		})
	}
}

// TestScenarioGoldensHaveScenarios keeps testdata/scenarios free of goldens no scenario writes.
func TestScenarioGoldensHaveScenarios(t *testing.T) {
	names := map[string]bool{}
	for _, sc := range scenarios() {
		names[sc.name] = true
	}
	entries, err := os.ReadDir(filepath.Join("testdata", "scenarios"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !names[e.Name()] {
			t.Errorf("testdata/scenarios/%s has no scenario", e.Name())
		}
	}
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	goldenpkg.Compare(t, file, got, *update)
}

var (
	textDuration = regexp.MustCompile(` \((?:[0-9.]+(?:ns|µs|ms|s|m|h))+\)`)
	mdDuration   = regexp.MustCompile(`(?m)^(\| [^|]+ \| [^|]+ \| )(?:[0-9.]+(?:ns|µs|ms|s|m|h))+( \|)`)
	anyDigest    = regexp.MustCompile(`sha256:[0-9a-f]{64}`)
	// bundleObject is the base64 of an olm.bundle.object: the manifests hold the registry's port.
	bundleObject = regexp.MustCompile(`"data": "[A-Za-z0-9+/]{16,}={0,2}"`)
	// checkout is the head's temporary checkout, once the temporary directory and SHA are replaced.
	checkout = regexp.MustCompile(`catalogbot-HEAD_SHA-[0-9]+`)
)

// normalizer replaces what differs between runs: the registry's port, commit SHAs (the catalog holds
// image references with the port), image digests (the bundle layers hold the operator image reference),
// bundle objects (base64 manifests holding the port), temporary paths and durations.
func (w *world) normalizer(shas map[string]string, repoDir string) func(string) string {
	var pairs []string
	for sha, label := range shas {
		pairs = append(pairs, sha, label, sha[:12], label)
	}
	for dig, label := range w.digests {
		pairs = append(pairs, dig, label)
	}
	pairs = append(pairs, w.reg.Host, "REGISTRY", repoDir, "REPO", os.TempDir(), "TMP")
	r := strings.NewReplacer(pairs...)
	return func(s string) string {
		s = r.Replace(s)
		s = textDuration.ReplaceAllString(s, " (Xms)")
		s = mdDuration.ReplaceAllString(s, "${1}Xms${2}")
		s = bundleObject.ReplaceAllString(s, `"data": "BASE64"`)
		s = checkout.ReplaceAllString(s, "CHECKOUT")
		return anyDigest.ReplaceAllString(s, "sha256:UNKNOWN")
	}
}

// world is one scenario's registry and the bundles rendered for it. Bundle images are pushed after the
// trees are built, except those marked unpushed; index images are pushed as they are built, since the
// trees are rendered from them.
type world struct {
	reg      *registrytest.Registry
	bundles  map[string]*builtBundle
	indexes  map[string]string // pkg@versions -> digest reference
	unpushed map[string]bool
	digests  map[string]string // digest -> stable label
	// outage, when set, is a repository the registry answers 503 for.
	outage atomic.Pointer[string]
	t      *testing.T
}

type builtBundle struct {
	b     *catalog.Bundle
	tag   name.Tag
	img   v1.Image
	extra map[name.Tag]v1.Image // the operator image
}

func newWorld(t *testing.T) *world {
	w := &world{t: t, bundles: map[string]*builtBundle{}, indexes: map[string]string{}, unpushed: map[string]bool{}, digests: map[string]string{}}
	w.reg = registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			if repo := w.outage.Load(); repo != nil && strings.HasPrefix(r.URL.Path, "/v2/"+*repo+"/") {
				// as the distribution registry answers when its storage is unavailable
				rw.Header().Set("Content-Type", "application/json")
				rw.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(rw, `{"errors":[{"code":"UNAVAILABLE","message":"service unavailable"}]}`)
				return
			}
			h.ServeHTTP(rw, r)
		})
	})
	return w
}

func (w *world) key(pkg, version string) string { return pkg + "@" + version }

// bundle renders pkg's bundle of version (each version replaces the one before it in the package's
// series, as versions are added), as opm render renders a bundle image.
func (w *world) bundle(pkg, version string) *catalog.Bundle {
	if bb, ok := w.bundles[w.key(pkg, version)]; ok {
		return cloneBundle(bb.b)
	}
	t := w.t
	t.Helper()
	opImg := image(t, fstest.MapFS{"etc/operator/version": {Data: []byte(pkg + " " + version + "\n")}}, nil)
	opTag := tagOf(t, fmt.Sprintf("%s/scenarios/%s:v%s", w.reg.Host, pkg, version))
	opRef := w.digestRef(t, opTag, opImg, pkg+":v"+version)
	files := bundleFiles(t, bundleSpec{Package: pkg, Version: version, Replaces: previous(version), Operator: opRef})
	img := image(t, files, map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
		"operators.operatorframework.io.bundle.package.v1":   pkg,
		"operators.operatorframework.io.bundle.channels.v1":  "stable",
	})
	tag := tagOf(t, fmt.Sprintf("%s/scenarios/%s-bundle:v%s", w.reg.Host, pkg, version))
	ref := w.digestRef(t, tag, img, pkg+"-bundle:v"+version)
	b, err := bundle.Render(t.Context(), files, ref)
	if err != nil {
		t.Fatalf("render bundle %s: %v", ref, err)
	}
	w.bundles[w.key(pkg, version)] = &builtBundle{b: b, tag: tag, img: img, extra: map[name.Tag]v1.Image{opTag: opImg}}
	return cloneBundle(b)
}

// previous is the version a scenario bundle replaces: 0.2.0 replaces 0.1.0, first versions replace nothing.
func previous(version string) string {
	switch version {
	case "0.2.0":
		return "0.1.0"
	}
	return ""
}

func (w *world) digestRef(t *testing.T, tag name.Tag, img v1.Image, label string) string {
	dig, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	w.digests[dig.String()] = "sha256:{" + label + "}"
	return tag.Context().Digest(dig.String()).String()
}

// push writes every rendered bundle's images to the registry, bundle images marked unpushed excepted.
func (w *world) push(ctx context.Context, t *testing.T) {
	t.Helper()
	for k, bb := range w.bundles {
		for tag, img := range bb.extra {
			if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
				t.Fatalf("push %s: %v", tag, err)
			}
		}
		if w.unpushed[k] {
			continue
		}
		if err := remote.Write(bb.tag, bb.img, remote.WithContext(ctx)); err != nil {
			t.Fatalf("push %s: %v", bb.tag, err)
		}
	}
}

// pkg is a package whose stable channel holds the given versions, each replacing the one before.
func (w *world) pkg(pkg string, versions ...string) *catalog.Catalog {
	c := &catalog.Catalog{Packages: []*catalog.Package{{Schema: catalog.SchemaPackage, Name: pkg, DefaultChannel: "stable"}}}
	ch := &catalog.Channel{Schema: catalog.SchemaChannel, Name: "stable", Package: pkg}
	for _, v := range versions {
		b := w.bundle(pkg, v)
		e := catalog.ChannelEntry{Name: b.Name}
		if p := previous(v); p != "" {
			e.Replaces = pkg + ".v" + p
		}
		ch.Entries = append(ch.Entries, e)
		c.Bundles = append(c.Bundles, b)
	}
	c.Channels = []*catalog.Channel{ch}
	return c
}

// index builds and pushes the index image of pkg's release: a file-based catalog of the package with
// the given versions under /configs/<pkg>/catalog.json, tagged with the last version. It returns the
// image's digest reference.
func (w *world) index(pkg string, versions ...string) string {
	key := pkg + "@" + strings.Join(versions, ",")
	if ref, ok := w.indexes[key]; ok {
		return ref
	}
	t := w.t
	t.Helper()
	var buf bytes.Buffer
	if err := catalog.WriteJSON(&buf, w.pkg(pkg, versions...)); err != nil {
		t.Fatalf("index %s: %v", key, err)
	}
	img := image(t, fstest.MapFS{"configs/" + pkg + "/catalog.json": {Data: buf.Bytes()}},
		map[string]string{render.LabelConfigs: "/configs"})
	tag := tagOf(t, fmt.Sprintf("%s/scenarios/%s-index:v%s", w.reg.Host, pkg, versions[len(versions)-1]))
	if err := remote.Write(tag, img, remote.WithContext(t.Context())); err != nil {
		t.Fatalf("push %s: %v", tag, err)
	}
	ref := w.digestRef(t, tag, img, pkg+"-index:v"+versions[len(versions)-1])
	w.indexes[key] = ref
	return ref
}

// refsFile is a references config named name with one reference per package, each pinned to its
// index image by digest: demo-operator's release with demoVersions, other-operator's v0.1.0.
func (w *world) refsFile(name string, demoVersions ...string) string {
	return "name: " + name + "\nrepo: " + w.reg.Host + "/scenarios/catalog\ntag: latest\nreferences:\n" +
		"- name: " + demoPkg + "\n  image: " + w.index(demoPkg, demoVersions...) + "\n" +
		"- name: " + otherPkg + "\n  image: " + w.index(otherPkg, "0.1.0") + "\n"
}

// renderInto renders the references config refs into dir/<its name>, as catalogbot render does.
func renderInto(ctx context.Context, t *testing.T, dir, refs string) {
	t.Helper()
	cfg, ds := render.ParseConfig([]byte(refs), "catalog.yaml")
	if len(ds) > 0 {
		t.Fatalf("references config: %v", ds)
	}
	out, ds, err := render.Render(ctx, cfg, render.Options{NoCache: true, RemoteOptions: []remote.Option{fastRetry}})
	if err != nil {
		t.Fatalf("render references: %v %v", err, ds)
	}
	if err := out.Write(dir, catalog.FormatJSON); err != nil {
		t.Fatal(err)
	}
}

func merge(cs ...*catalog.Catalog) *catalog.Catalog {
	out := &catalog.Catalog{}
	for _, c := range cs {
		out.Packages = append(out.Packages, c.Packages...)
		out.Channels = append(out.Channels, c.Channels...)
		out.Bundles = append(out.Bundles, c.Bundles...)
	}
	return out
}

func cloneBundle(b *catalog.Bundle) *catalog.Bundle {
	cp := *b
	cp.Properties = append([]catalog.Property(nil), b.Properties...)
	cp.RelatedImages = append([]catalog.RelatedImage(nil), b.RelatedImages...)
	return &cp
}

func tagOf(t *testing.T, s string) name.Tag {
	tag, err := name.NewTag(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return tag
}

// image is a one-layer OCI image of files with the given config labels; it is reproducible (no
// timestamps), so its digest depends on the files only.
func image(t *testing.T, files fstest.MapFS, labels map[string]string) v1.Image {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[n].Data)), ModTime: time.Unix(0, 0)}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(files[n].Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		t.Fatal(err)
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Config(img, v1.Config{Labels: labels}); err != nil {
		t.Fatal(err)
	}
	return img
}

type bundleSpec struct {
	Package, Version, Replaces, Operator string
}

var csvTmpl = template.Must(template.New("csv").Parse(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: {{.Package}}.v{{.Version}}
  annotations:
    containerImage: {{.Operator}}
spec:
  displayName: {{.Package}}
  version: {{.Version}}
{{- if .Replaces}}
  replaces: {{.Package}}.v{{.Replaces}}
{{- end}}
  installModes:
  - type: AllNamespaces
    supported: true
  customresourcedefinitions:
    owned:
    - name: widgets.{{.Package}}.example.com
      version: v1
      kind: Widget
  relatedImages:
  - name: operator
    image: {{.Operator}}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: {{.Package}}
        spec:
          selector:
            matchLabels: {app: {{.Package}}}
          template:
            metadata:
              labels: {app: {{.Package}}}
            spec:
              containers:
              - name: manager
                image: {{.Operator}}
`))

var crdTmpl = template.Must(template.New("crd").Parse(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{{.Package}}.example.com
spec:
  group: {{.Package}}.example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object}
`))

var annotationsTmpl = template.Must(template.New("annotations").Parse(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: {{.Package}}
  operators.operatorframework.io.bundle.channels.v1: stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
`))

// bundleFiles is a registry+v1 bundle directory: a CSV, a CRD and the annotations.
func bundleFiles(t *testing.T, s bundleSpec) fstest.MapFS {
	t.Helper()
	out := fstest.MapFS{}
	for file, tmpl := range map[string]*template.Template{
		"manifests/" + s.Package + ".clusterserviceversion.yaml": csvTmpl,
		"manifests/widgets.crd.yaml":                             crdTmpl,
		"metadata/annotations.yaml":                              annotationsTmpl,
	} {
		var buf bytes.Buffer
		if err := tmpl.Execute(&buf, s); err != nil {
			t.Fatal(err)
		}
		out[file] = &fstest.MapFile{Data: buf.Bytes(), Mode: 0o644}
	}
	return out
}

// gitRepo is a scenario's repository, written with go-git at fixed times.
type gitRepo struct {
	dir  string
	repo *git.Repository
	wt   *git.Worktree
	when time.Time
}

func initRepo(t *testing.T, dir string) *gitRepo {
	t.Helper()
	r, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{
		InitOptions: git.InitOptions{DefaultBranch: plumbing.NewBranchReferenceName("main")},
	})
	if err != nil {
		t.Fatalf("init %s: %v", dir, err)
	}
	wt, err := r.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	return &gitRepo{dir: dir, repo: r, wt: wt, when: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
}

// commit replaces the work tree with tr and commits everything (deletions included) as author.
func (g *gitRepo) commit(ctx context.Context, t *testing.T, tr tree, msg, author string) plumbing.Hash {
	t.Helper()
	entries, err := os.ReadDir(g.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != ".git" {
			if err := os.RemoveAll(filepath.Join(g.dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if tr.catalog != nil {
		if err := catalog.WriteDir(filepath.Join(g.dir, "catalog"), tr.catalog, catalog.FormatJSON); err != nil {
			t.Fatal(err)
		}
	}
	if tr.rendered != "" {
		renderInto(ctx, t, g.dir, tr.rendered)
	}
	for rel, data := range tr.files {
		p := filepath.Join(g.dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatalf("stage: %v", err)
	}
	g.when = g.when.Add(time.Minute)
	sig := &object.Signature{Name: author, Email: author + "@users.noreply.example.com", When: g.when}
	h, err := g.wt.Commit(msg, &git.CommitOptions{Author: sig, Committer: sig, AllowEmptyCommits: true})
	if err != nil {
		t.Fatalf("commit %q: %v", msg, err)
	}
	return h
}

// branch creates branch at from and checks it out.
func (g *gitRepo) branch(t *testing.T, branch string, from plumbing.Hash) {
	t.Helper()
	err := g.wt.Checkout(&git.CheckoutOptions{Hash: from, Branch: plumbing.NewBranchReferenceName(branch), Create: true, Force: true})
	if err != nil {
		t.Fatalf("branch %s: %v", branch, err)
	}
}
