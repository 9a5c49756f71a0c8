package pipeline_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// Smoke per cluster version in a template-driven repository. The base of these tests is the shared
// data's two packages with each package's newest bundle removed from some catalogs; the head is the
// committed catalogs as upstream has them. So the pull request adds nfs-provisioner-operator.v0.0.9 to
// catalogs v4.19-v4.22 (an upgrade from v0.0.8) and, in some tests, odf-node-recovery-operator.v1.1.0 to
// catalog v4.12.

const (
	nfsNew = "nfs-provisioner-operator.v0.0.9"
	nfsOld = "nfs-provisioner-operator.v0.0.8"
	odfNew = "odf-node-recovery-operator.v1.1.0"
	odfOld = "odf-node-recovery-operator.v1.0.0"
)

// nodeImages maps the Kubernetes version of every affected catalog to a node image; 1.33 has two
// patch releases (the newest must be chosen).
var nodeImages = map[string]string{
	"1.25": "kind/node:v1.25", "v1.32.5": "kind/node:v1.32", "v1.33.1": "kind/node:v1.33.1",
	"v1.33.13": "kind/node:v1.33.13", "1.34": "kind/node:v1.34", "1.35": "kind/node:v1.35",
}

// dropNewest removes bundle newest (which replaces old) from a catalog.yaml of the shared data: its
// channel entry and its olm.bundle document.
func dropNewest(t *testing.T, content, newest, old string) string {
	t.Helper()
	entry := "- name: " + newest + "\n  replaces: " + old + "\n"
	if !strings.Contains(content, entry) {
		t.Fatalf("no channel entry %q", entry)
	}
	content = strings.Replace(content, entry, "", 1)
	docs := strings.Split(content, "---\n")
	out := docs[:0]
	for _, d := range docs {
		if strings.Contains(d, "\nname: "+newest+"\n") && strings.Contains(d, "schema: olm.bundle") {
			continue
		}
		out = append(out, d)
	}
	if len(out) == len(docs) {
		t.Fatalf("no bundle %s", newest)
	}
	return strings.Join(out, "---\n")
}

// smokeTrees is the head (the shared data as committed) and a base without the newest nfs bundle in
// v4.19-v4.22 and, when odf, without the newest odf bundle in v4.12; smoke is enabled on the base with
// the extra smoke settings given.
func smokeTrees(t *testing.T, odf bool, smokeSettings string) (base, head tree) {
	if odf {
		return smokeTreesOdf(t, []string{"v4.12"}, smokeSettings)
	}
	return smokeTreesOdf(t, nil, smokeSettings)
}

// smokeTreesOdf is smokeTrees with the new odf bundle added to the catalogs given.
func smokeTreesOdf(t *testing.T, odfCatalogs []string, smokeSettings string) (base, head tree) {
	head = multiBase(t)
	head.files[".catalogbot.yaml"] += "publish:\n  base: scratch\nsmoke:\n  enabled: true\n" + smokeSettings
	base = head.with(nil)
	for _, v := range []string{"v4.19", "v4.20", "v4.21", "v4.22"} {
		f := "catalogs/" + v + "/" + nfsPkg + "/catalog.yaml"
		base.files[f] = dropNewest(t, base.files[f], nfsNew, nfsOld)
	}
	for _, v := range odfCatalogs {
		f := "catalogs/" + v + "/" + odfPkg + "/catalog.yaml"
		base.files[f] = dropNewest(t, base.files[f], odfNew, odfOld)
	}
	return base, head
}

// fakeSmoke is a hand-written smoke.Run: it records each install's options and what the catalog
// archives hold, keeps smoke.Run's contract on clusters (create when asked, delete before returning
// unless Keep, also when ctx ends), notes any moment two clusters would exist, and fails or hangs the
// installs of the catalogs it is told to.
type fakeSmoke struct {
	t  *testing.T
	mu sync.Mutex
	// fail: catalog (cluster name suffix) whose first package's CSV fails; hang: whose install waits for
	// ctx; onStart runs when an install starts (a test cancels the run there).
	fail, hang, undeletable, refuse map[string]bool
	// failV1: catalog whose first package fails its OLM v1 install only (smokeolm_test.go)
	failV1  map[string]bool
	onStart func(cluster string)

	calls   []smoke.Options
	events  []string
	live    []string
	overlap bool
	// what the archives held: per cluster, whether base and head serve the new bundles
	baseHas, headHas map[string]bool
}

func newFakeSmoke(t *testing.T) *fakeSmoke {
	return &fakeSmoke{t: t, fail: map[string]bool{}, hang: map[string]bool{}, undeletable: map[string]bool{}, refuse: map[string]bool{}, failV1: map[string]bool{}, baseHas: map[string]bool{}, headHas: map[string]bool{}}
}

func (f *fakeSmoke) event(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, s)
}

// catalogOf is the catalog a cluster name was made for (its last part, as smokeClusterName writes it).
func catalogOf(cluster string) string {
	i := strings.LastIndex(cluster, "-v4-")
	if i < 0 {
		return cluster
	}
	return strings.Replace(cluster[i+1:], "-", ".", 1)
}

func (f *fakeSmoke) run(ctx context.Context, opts smoke.Options) (res smoke.Result, err error) {
	f.mu.Lock()
	f.calls = append(f.calls, opts)
	f.mu.Unlock()
	cat := catalogOf(opts.ClusterName)
	if !strings.Contains(opts.CatalogImage, "@sha256:") || (len(opts.FromBase) > 0) != strings.Contains(opts.BaseCatalogImage, "@sha256:") {
		return res, diag.UsageError(fmt.Errorf("fake: catalog images %q, base %q for %v", opts.CatalogImage, opts.BaseCatalogImage, opts.FromBase))
	}
	if opts.OLM == smoke.OLMv1 {
		// OLM v1's controllers pull the catalog images themselves: archives would be refused
		if opts.CatalogArchive != "" || opts.BaseCatalogArchive != "" {
			return res, diag.UsageError(fmt.Errorf("fake: catalog archives given to an OLM v1 install"))
		}
	} else {
		head := archiveText(f.t, opts.CatalogArchive)
		f.mu.Lock()
		f.headHas[cat] = strings.Contains(head, nfsNew) || strings.Contains(head, odfNew)
		if opts.BaseCatalogArchive != "" {
			base := archiveText(f.t, opts.BaseCatalogArchive)
			f.baseHas[cat] = strings.Contains(base, nfsNew) || strings.Contains(base, odfNew)
		}
		f.mu.Unlock()
	}
	f.mu.Lock()
	if len(f.live) > 0 {
		f.overlap = true
	}
	f.live = append(f.live, opts.ClusterName)
	f.mu.Unlock()
	f.event("create " + cat + " " + opts.NodeImage)
	res = smoke.Result{Cluster: opts.ClusterName, ClusterCreated: opts.CreateCluster, CatalogImage: opts.CatalogImage}
	defer func() {
		if opts.Keep {
			return
		}
		if f.undeletable[cat] {
			err = errors.Join(err, diag.InfraError(fmt.Errorf("%w: deleting kind cluster %s: device busy", smoke.ErrClusterNotDeleted, opts.ClusterName)))
			return
		}
		f.mu.Lock()
		f.live = slices.DeleteFunc(f.live, func(s string) bool { return s == opts.ClusterName })
		f.mu.Unlock()
		f.event("delete " + cat)
	}()
	if f.onStart != nil {
		f.onStart(opts.ClusterName)
	}
	if f.refuse[cat] {
		return res, diag.UsageError(fmt.Errorf("OLM is not installed in kind cluster %s and no OLM manifests were given", opts.ClusterName))
	}
	if f.hang[cat] {
		<-ctx.Done()
		return res, diag.InfraError(fmt.Errorf("creating kind cluster %s: %w", opts.ClusterName, context.Cause(ctx)))
	}
	for i, p := range opts.Packages {
		r := smoke.PackageResult{Package: p, CSV: opts.Expect[p], Succeeded: true, FromBase: slices.Contains(opts.FromBase, p)}
		if i == 0 && (f.fail[cat] || opts.OLM == smoke.OLMv1 && f.failV1[cat]) {
			r.Succeeded = false
			r.Diagnostics = []diag.Diagnostic{{Severity: diag.Error, Check: "smoke", Rule: "csv-failed", Package: p, Bundle: opts.Expect[p],
				Message: "CSV " + opts.Expect[p] + " phase Failed: install strategy failed"}}
		}
		res.Packages = append(res.Packages, r)
	}
	if failed := res.Failed(); len(failed) > 0 {
		return res, diag.InvalidError(fmt.Errorf("%w: %s", smoke.ErrPackagesFailed, strings.Join(failed, ", ")))
	}
	return res, nil
}

// archiveText is the file contents of the catalog image in an OCI layout archive, concatenated.
func archiveText(t *testing.T, archive string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatalf("catalog archive: %v", err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) == 0 {
		t.Fatalf("layout index: %v %+v", err, m)
	}
	img, err := idx.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	rc := mutate.Extract(img)
	defer rc.Close()
	var b bytes.Buffer
	fs := tar.NewReader(rc)
	for {
		_, err := fs.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(&b, fs)
	}
	return b.String()
}

// runSmoke runs the pipeline on base..head with the fake's smoke runner; registries refuse (smoke
// builds its catalog images on scratch).
func runSmoke(t *testing.T, base, head tree, f *fakeSmoke, in pipeline.SmokeInput, ctx context.Context, stageTimeout time.Duration) *report.Report {
	t.Helper()
	if ctx == nil {
		ctx = t.Context()
	}
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	g.branch(t, "pr", g.commit(t.Context(), t, base, "base", "catalog-admin"))
	g.commit(t.Context(), t, head, "change", "catalog-admin")
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	in.Run = f.run
	r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: "pr", Author: "catalog-admin", SkipImages: true,
		RemoteOptions: []remote.Option{fastRetry, remote.WithTransport(refusingTransport{new(atomic.Int64)})}, Smoke: &in, StageTimeout: stageTimeout})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r
}

// created lists the "create CATALOG IMAGE" events in order.
func (f *fakeSmoke) created() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, e := range f.events {
		if c, ok := strings.CutPrefix(e, "create "); ok {
			out = append(out, c)
		}
	}
	return out
}

// checkLifecycles requires every cluster to be deleted before the next is created.
func (f *fakeSmoke) checkLifecycles(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.overlap || len(f.live) > 0 {
		t.Fatalf("two clusters at once, or one left: %q (live %q)", f.events, f.live)
	}
	for i := 0; i+1 < len(f.events); i += 2 {
		c, _, _ := strings.Cut(strings.TrimPrefix(f.events[i], "create "), " ")
		if !strings.HasPrefix(f.events[i], "create ") || f.events[i+1] != "delete "+c {
			t.Fatalf("events %q: want create then delete per catalog", f.events)
		}
	}
}
