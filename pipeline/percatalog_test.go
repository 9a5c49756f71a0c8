package pipeline_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// The done criterion of issue 15 on a community-operators-shaped repository: odf-node-recovery-operator
// (reviewers jordigilh and pkliczewski in its ci.yaml) mapped into all eleven catalogs v4.12-v4.22, next
// to nfs-provisioner-operator (v4.19-v4.22); every render is made here, offline, from the bundles of the
// committed catalogs.

const (
	odfPkg      = "odf-node-recovery-operator"
	odfCI       = "operators/odf-node-recovery-operator/ci.yaml"
	odfTemplate = "operators/odf-node-recovery-operator/catalog-templates/basic.yaml"
	odfReviewer = "jordigilh"
)

var allVersions = []string{"v4.12", "v4.13", "v4.14", "v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "v4.21", "v4.22"}

// allCatalogs are the eleven catalogs as multiConfig configures them (migrated from v4.17 on).
func allCatalogs() []template.Catalog {
	var out []template.Catalog
	for _, v := range allVersions {
		c := template.Catalog{Name: v, Dir: "catalogs/" + v}
		if minor, _ := strconv.Atoi(strings.TrimPrefix(v, "v4.")); minor >= 17 {
			c.MigrateLevel = "bundle-object-to-csv-metadata"
		}
		out = append(out, c)
	}
	return out
}

// renderedTree returns tr with every mapping of pkg rendered into its catalogs, offline, the bundle
// cache seeded from the committed catalogs of seed.
func renderedTree(t *testing.T, tr, seed tree, pkg string) tree {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	for f, data := range tr.files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range allVersions {
		if err := os.MkdirAll(filepath.Join(dir, "catalogs", v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cats := allCatalogs()
	jobs, _, err := template.Plan(dir, cats, pkg)
	if err != nil {
		t.Fatalf("plan %s: %v", pkg, err)
	}
	seedFS := fstest.MapFS{}
	for f, data := range seed.files {
		seedFS[f] = &fstest.MapFile{Data: []byte(data)}
	}
	store := template.NewStore("")
	if err := template.SeedFromFS(ctx, store, seedFS, cats, jobs); err != nil {
		t.Fatal(err)
	}
	out := tr.with(nil)
	for _, j := range jobs {
		data, err := j.Render(ctx, dir, &template.Images{Store: store, Offline: true})
		if err != nil {
			t.Fatalf("render %s into %s: %v", pkg, j.Catalog.Name, err)
		}
		out.files[j.Output()] = string(data)
	}
	return out
}

// elevenBase is multiBase with odf-node-recovery-operator mapped into all eleven catalogs, rendered.
func elevenBase(t *testing.T) tree {
	t.Helper()
	base := multiBase(t)
	ci := base.files[odfCI]
	old := `catalog_names: ["v4.12", "v4.13", "v4.14","v4.15", "v4.16", "v4.17","v4.18"]`
	if !strings.Contains(ci, old) {
		t.Fatalf("unexpected %s:\n%s", odfCI, ci)
	}
	ci = strings.Replace(ci, old, `catalog_names: ["`+strings.Join(allVersions, `", "`)+`"]`, 1)
	return renderedTree(t, base.with(map[string]string{odfCI: ci}), base, odfPkg)
}

// withStable adds a stable channel holding both bundles to an odf template.
func withStable(t *testing.T, tmpl string) string {
	t.Helper()
	anchor := "  - schema: olm.bundle\n"
	if !strings.Contains(tmpl, anchor) {
		t.Fatalf("no bundle in template:\n%s", tmpl)
	}
	stable := "  - entries:\n      - name: odf-node-recovery-operator.v1.0.0\n      - name: odf-node-recovery-operator.v1.1.0\n        replaces: odf-node-recovery-operator.v1.0.0\n" +
		"    name: stable\n    package: odf-node-recovery-operator\n    schema: olm.channel\n"
	return strings.Replace(tmpl, anchor, stable+anchor, 1)
}

type multiRun struct {
	dir  string
	repo *gitrepo.Repo
	r    *report.Report
}

// runMultiAs runs the pull request base..head authored by author.
func runMultiAs(t *testing.T, base, head tree, author string, opts ...remote.Option) multiRun {
	t.Helper()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	g.branch(t, "pr", g.commit(ctx, t, base, "base", "catalog-admin"))
	g.commit(ctx, t, head, "change", author)
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: "pr", Author: author,
		RemoteOptions: append([]remote.Option{fastRetry}, opts...)})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return multiRun{dir: dir, repo: repo, r: r}
}

func reportText(t *testing.T, r *report.Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteText(&b, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A ci.yaml reviewer changes a template mapped into eleven catalogs and commits the render: every stage
// passes without a registry, and the eleven identical graph diffs read as one.
func TestMultiCatalogReviewerTemplateChangePasses(t *testing.T) {
	base := elevenBase(t)
	head := renderedTree(t, base.with(map[string]string{odfTemplate: withStable(t, base.files[odfTemplate])}), base, odfPkg)
	var requests atomic.Int64
	run := runMultiAs(t, base, head, odfReviewer, remote.WithTransport(refusingTransport{&requests}))
	r := run.r
	for _, s := range r.Stages {
		if s.Status == report.Fail || s.Status == report.Error {
			t.Errorf("%s %s: %s %s %+v", s.Name, s.Status, s.Summary, s.Err, s.Diagnostics)
		}
	}
	if r.Verdict() != report.Pass {
		t.Fatalf("verdict %s, want pass", r.Verdict())
	}
	g := stageOf(t, r, "graph")
	if g.Status != report.Pass || !strings.Contains(g.Summary, "11 changed channels") || !strings.Contains(g.Summary, "across 11 catalogs (1 distinct diff)") {
		t.Errorf("graph %s: %q", g.Status, g.Summary)
	}
	if strings.Count(g.Details, "#### catalogs") != 1 || !strings.HasPrefix(g.Details, "#### catalogs v4.12-v4.22\n") ||
		strings.Count(g.Details, "odf-node-recovery-operator / stable (new channel)") != 1 {
		t.Errorf("graph details do not read as one diff:\n%s", g.Details)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d registry requests: every bundle is in the base's catalogs", n)
	}
	// readable at eleven catalogs: measured, not guessed (see README)
	md, text := report.Markdown(r, 0), reportText(t, r)
	t.Logf("eleven catalogs, one diff: markdown %d bytes, text %d bytes, graph details %d bytes", len(md), len(text), len(g.Details))
	if len(md) > 8000 || len(text) > 4000 {
		t.Errorf("report too long for one diff in eleven catalogs: markdown %d, text %d bytes\n%s", len(md), len(text), md)
	}
}

// A template mapped into one catalog that drops a released bundle fails the graph stage on that catalog's
// line only; the ten identical diffs of the other catalogs still read as one, the differing one apart.
func TestMultiCatalogTemplateBreaksOneCatalogGraph(t *testing.T) {
	base := elevenBase(t)
	odd := "operators/odf-node-recovery-operator/catalog-templates/v4.18.yaml"
	tmpl := withStable(t, base.files[odfTemplate])
	// v4.18 only: the channel starts at v1.1.0 and v1.0.0's bundle is gone
	oddTmpl := strings.Replace(base.files[odfTemplate], "      - name: odf-node-recovery-operator.v1.0.0\n      - name: odf-node-recovery-operator.v1.1.0\n        replaces: odf-node-recovery-operator.v1.0.0\n",
		"      - name: odf-node-recovery-operator.v1.1.0\n", 1)
	i := strings.Index(oddTmpl, "  - schema: olm.bundle\n")
	j := strings.Index(oddTmpl, "  # v.1.0.0\n")
	if i < 0 || j < 0 || oddTmpl == base.files[odfTemplate] {
		t.Fatalf("template edit did not apply:\n%s", oddTmpl)
	}
	oddTmpl = oddTmpl[:i] + oddTmpl[j+len("  # v.1.0.0\n"):]
	var ten []string
	for _, v := range allVersions {
		if v != "v4.18" {
			ten = append(ten, v)
		}
	}
	ci := strings.Replace(base.files[odfCI], "  - template_name: basic.yaml\n    catalog_names: [\""+strings.Join(allVersions, `", "`)+"\"]\n",
		"  - template_name: basic.yaml\n    catalog_names: [\""+strings.Join(ten, `", "`)+"\"]\n    type: olm.template.basic\n  - template_name: v4.18.yaml\n    catalog_names: [\"v4.18\"]\n", 1)
	if ci == base.files[odfCI] {
		t.Fatalf("ci.yaml edit did not apply:\n%s", base.files[odfCI])
	}
	head := renderedTree(t, base.with(map[string]string{odfTemplate: tmpl, odd: oddTmpl, odfCI: ci}), base, odfPkg)
	var requests atomic.Int64
	r := runMultiAs(t, base, head, odfReviewer, remote.WithTransport(refusingTransport{&requests})).r

	// the reviewer kept ci.yaml's reviewers: changing its mapping is theirs to do
	if o := stageOf(t, r, "owners"); o.Status != report.Pass {
		t.Errorf("owners %s: %s %+v", o.Status, o.Summary, o.Diagnostics)
	}
	g := stageOf(t, r, "graph")
	if g.Status != report.Fail {
		t.Fatalf("graph %s, want fail: %s", g.Status, g.Summary)
	}
	oddCatalog := "catalogs/v4.18/" + odfPkg + "/catalog.yaml"
	if got := filesOf(g, "released-bundle-removed"); !slices.Equal(got, []string{oddCatalog}) {
		t.Errorf("released-bundle-removed on %q, want only %s", got, oddCatalog)
	}
	for _, want := range []string{"#### catalogs v4.12-v4.17, v4.19-v4.22\n", "#### catalog v4.18\n"} {
		if !strings.Contains(g.Details, want) {
			t.Errorf("graph details lack %q:\n%s", want, g.Details)
		}
	}
	if strings.Count(g.Details, "\n#### catalog") != 1 || !strings.Contains(g.Summary, "(2 distinct diffs)") {
		t.Errorf("want two groups: %q\n%s", g.Summary, g.Details)
	}
	if r.Verdict() != report.Fail {
		t.Errorf("verdict %s, want fail", r.Verdict())
	}
	md, text := report.Markdown(r, 0), reportText(t, r)
	t.Logf("eleven catalogs, two distinct graph diffs: markdown %d bytes, text %d bytes", len(md), len(text))
	if len(md) > 12000 || len(text) > 6000 {
		t.Errorf("report too long: markdown %d, text %d bytes", len(md), len(text))
	}
}

// A stranger's template change fails the owners stage on the template, naming the ci.yaml reviewers.
// Attack: the stranger also adds themselves to ci.yaml's reviewers; the owners are read at the base
// branch's tip, and a change to the reviewers is for a maintainer, so it gains nothing.
func TestMultiCatalogStrangerAndReviewerAttack(t *testing.T) {
	base := elevenBase(t)
	tmpl := withStable(t, base.files[odfTemplate])
	for _, tc := range []struct {
		name   string
		selfCI bool
	}{{"stranger", false}, {"stranger adds themselves as reviewer", true}} {
		t.Run(tc.name, func(t *testing.T) {
			edit := map[string]string{odfTemplate: tmpl}
			if tc.selfCI {
				edit[odfCI] = strings.Replace(base.files[odfCI], "reviewers:\n", "reviewers:\n  - mallory\n", 1)
			}
			head := renderedTree(t, base.with(edit), base, odfPkg)
			var requests atomic.Int64
			r := runMultiAs(t, base, head, "mallory", remote.WithTransport(refusingTransport{&requests})).r
			o := stageOf(t, r, "owners")
			if o.Status != report.Fail {
				t.Fatalf("owners %s, want fail: %s", o.Status, o.Summary)
			}
			var onTemplate, onCI bool
			for _, d := range o.Diagnostics {
				if d.Rule == "owners-not-owner" && d.Package == odfPkg && strings.HasPrefix(d.File, "operators/"+odfPkg+"/") && strings.Contains(d.Hint, odfReviewer) {
					onTemplate = true
				}
				if d.Rule == "owners-owners-file" && d.File == odfCI {
					onCI = true
				}
			}
			if !onTemplate {
				t.Errorf("no owners-not-owner on the package naming %s: %+v", odfReviewer, o.Diagnostics)
			}
			if tc.selfCI && !onCI {
				t.Errorf("the reviewers change is not held for a maintainer: %+v", o.Diagnostics)
			}
			if r.Verdict() != report.Fail {
				t.Errorf("verdict %s, want fail", r.Verdict())
			}
		})
	}
	// Maintainers still override.
	head := renderedTree(t, base.with(map[string]string{odfTemplate: tmpl,
		odfCI: strings.Replace(base.files[odfCI], "reviewers:\n", "reviewers:\n  - mallory\n", 1)}), base, odfPkg)
	var requests atomic.Int64
	r := runMultiAs(t, base, head, "catalog-admin", remote.WithTransport(refusingTransport{&requests})).r
	if o := stageOf(t, r, "owners"); o.Status != report.Pass {
		t.Errorf("a maintainer may change anything: owners %s %+v", o.Status, o.Diagnostics)
	}
}

// A stale render (template changed, catalogs not re-rendered) by a reviewer fails on each catalog file.
func TestMultiCatalogReviewerStaleRenderFails(t *testing.T) {
	base := elevenBase(t)
	head := base.with(map[string]string{odfTemplate: withStable(t, base.files[odfTemplate])})
	var requests atomic.Int64
	r := runMultiAs(t, base, head, odfReviewer, remote.WithTransport(refusingTransport{&requests})).r
	st := stageOf(t, r, "render")
	var want []string
	for _, v := range allVersions {
		want = append(want, "catalogs/"+v+"/"+odfPkg+"/catalog.yaml")
	}
	if got := filesOf(st, "render-drift"); st.Status != report.Fail || !slices.Equal(got, want) {
		t.Errorf("render %s, drift on %q, want each of the eleven catalogs", st.Status, got)
	}
	if o := stageOf(t, r, "owners"); o.Status != report.Pass {
		t.Errorf("owners %s: %+v", o.Status, o.Diagnostics)
	}
	// readable at eleven catalogs: the eleven identical diffs are printed once
	md, text := report.Markdown(r, 0), reportText(t, r)
	t.Logf("eleven catalogs, stale render: markdown %d bytes, text %d bytes", len(md), len(text))
	if n := strings.Count(text, "+name: stable"); n != 1 {
		t.Errorf("the diff is printed %d times in the text report, want once", n)
	}
	if len(md) > 12000 || len(text) > 8000 {
		t.Errorf("report too long for one stale render in eleven catalogs: markdown %d, text %d bytes", len(md), len(text))
	}
}

// An image named by the same bundle in four catalogs is asked of its registry once; its failure is one
// diagnostic, on the first catalog's line, naming all four catalogs.
func TestMultiCatalogImageCheckedOnce(t *testing.T) {
	base := multiBase(t)
	var manifests atomic.Int64
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") {
				manifests.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	missing := reg.Host + "/gone/nfs-provisioner-operator@sha256:" + strings.Repeat("d", 64)
	edit := map[string]string{}
	const old = "quay.io/community-operator-pipeline-prod/nfs-provisioner-operator@sha256:ab7b"
	for _, v := range []string{"v4.19", "v4.20", "v4.21", "v4.22"} {
		f := "catalogs/" + v + "/" + nfsPkg + "/catalog.yaml"
		data := base.files[f]
		i := strings.Index(data, old)
		if i < 0 {
			t.Fatalf("no v0.0.9 bundle image in %s", f)
		}
		end := i + strings.IndexByte(data[i:], '\n')
		edit[f] = strings.ReplaceAll(data, data[i:end], missing)
	}
	r := runMultiAs(t, base, base.with(edit), "catalog-admin").r
	st := stageOf(t, r, "images")
	if st.Status != report.Fail {
		t.Fatalf("images %s, want fail: %s %s", st.Status, st.Summary, st.Err)
	}
	var missingDs []string
	for _, d := range st.Diagnostics {
		if d.Rule == "image-missing" {
			missingDs = append(missingDs, d.File)
			if !strings.Contains(d.Message, "referenced by catalogs v4.19-v4.22") {
				t.Errorf("diagnostic does not name every catalog: %s", d.Message)
			}
		}
	}
	if !slices.Equal(missingDs, []string{"catalogs/v4.19/" + nfsPkg + "/catalog.yaml"}) {
		t.Errorf("image-missing on %q, want once, on catalogs/v4.19", missingDs)
	}
	if n := manifests.Load(); n != 1 {
		t.Errorf("%d manifest requests, want 1: the image is checked once across catalogs", n)
	}
}

// The owners are the ci.yaml reviewers of the base branch's tip, not of the pull request's merge base: a
// reviewer removed on main after the pull request branched no longer approves it (the bot and the Action
// load the rules from the tip).
func TestMultiCatalogReviewersFromBaseTip(t *testing.T) {
	ctx := t.Context()
	base := elevenBase(t)
	head := renderedTree(t, base.with(map[string]string{odfTemplate: withStable(t, base.files[odfTemplate])}), base, odfPkg)
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	mergeBase := g.commit(ctx, t, base, "base", "catalog-admin")
	g.branch(t, "pr", mergeBase)
	g.commit(ctx, t, head, "change", odfReviewer)
	g.branch(t, "main2", mergeBase)
	removed := strings.Replace(base.files[odfCI], "  - "+odfReviewer+"\n", "", 1)
	if removed == base.files[odfCI] {
		t.Fatalf("no %s in %s", odfReviewer, odfCI)
	}
	tip := g.commit(ctx, t, base.with(map[string]string{odfCI: removed}), "remove a reviewer", "catalog-admin")
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rulesAt string
		want    report.Status
	}{{mergeBase.String(), report.Pass}, {tip.String(), report.Fail}} {
		rules, st := pipeline.LoadRules(repo, tc.rulesAt)
		if st.Status != report.Pass {
			t.Fatalf("rules: %+v", st)
		}
		var requests atomic.Int64
		r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: mergeBase.String(), Head: "pr", Author: odfReviewer, Rules: rules,
			RemoteOptions: []remote.Option{remote.WithTransport(refusingTransport{&requests})}})
		if err != nil {
			t.Fatal(err)
		}
		if o := stageOf(t, r, "owners"); o.Status != tc.want {
			t.Errorf("rules at %s: owners %s, want %s: %+v", tc.rulesAt[:12], o.Status, tc.want, o.Diagnostics)
		}
	}
}

// Attack: a package's reviewer adds a catalog directory the base does not have. A catalogs pattern would
// take it for a new catalog, published as a new image: that is for a maintainer, whoever owns the package.
func TestMultiCatalogNewCatalogNeedsMaintainer(t *testing.T) {
	base := elevenBase(t)
	rogue := "catalogs/v4.99/" + odfPkg + "/catalog.yaml"
	head := base.with(map[string]string{rogue: base.files["catalogs/v4.18/"+odfPkg+"/catalog.yaml"]})
	var requests atomic.Int64
	r := runMultiAs(t, base, head, odfReviewer, remote.WithTransport(refusingTransport{&requests})).r
	o := stageOf(t, r, "owners")
	if got := filesOf(o, "owners-outside-package"); o.Status != report.Fail || !slices.Equal(got, []string{rogue}) {
		t.Errorf("owners %s, outside-package on %q, want a failure on %s: %+v", o.Status, got, rogue, o.Diagnostics)
	}
	// A maintainer may add it.
	if o := stageOf(t, runMultiAs(t, base, head, "catalog-admin", remote.WithTransport(refusingTransport{&requests})).r, "owners"); o.Status != report.Pass {
		t.Errorf("maintainer: owners %s %+v", o.Status, o.Diagnostics)
	}
}

// A ci.yaml whose reviewers do not parse at the base tip (a scalar where a list belongs) names no reviewers: its package's changes need a
// maintainer (it blocks); a broken base file never lets anyone through.
func TestMultiCatalogBrokenBaseCIYAMLBlocks(t *testing.T) {
	good := elevenBase(t)
	base := good.with(map[string]string{odfCI: strings.Replace(good.files[odfCI], "reviewers:\n", "reviewers: not-a-list\nformer_reviewers:\n", 1)})
	head := renderedTree(t, base.with(map[string]string{odfTemplate: withStable(t, base.files[odfTemplate])}), base, odfPkg)
	var requests atomic.Int64
	r := runMultiAs(t, base, head, odfReviewer, remote.WithTransport(refusingTransport{&requests})).r
	if o := stageOf(t, r, "owners"); o.Status != report.Fail {
		t.Fatalf("owners %s with the base's ci.yaml broken, want fail: %s %+v", o.Status, o.Summary, o.Diagnostics)
	}
	if r.Verdict() == report.Pass {
		t.Fatal("verdict pass with the base's ci.yaml broken")
	}
}

// A template change that adds bundles to a catalog without committing the render (odf mapped into v4.19
// as well) fails the drift gate, and the images stage still checks the bundle images the rendered
// change adds, on the template's lines, instead of finding "no new or changed bundle".
func TestMultiCatalogTemplateAddsBundleImagesChecked(t *testing.T) {
	base := multiBase(t)
	ci := base.files[odfCI]
	old := `catalog_names: ["v4.12", "v4.13", "v4.14","v4.15", "v4.16", "v4.17","v4.18"]`
	if !strings.Contains(ci, old) {
		t.Fatalf("unexpected %s:\n%s", odfCI, ci)
	}
	head := base.with(map[string]string{odfCI: strings.Replace(ci, old, `catalog_names: ["v4.12", "v4.13", "v4.14","v4.15", "v4.16", "v4.17","v4.18", "v4.19"]`, 1)})
	var requests atomic.Int64
	r := runMultiAs(t, base, head, "catalog-admin", remote.WithTransport(refusingTransport{&requests})).r
	if st := stageOf(t, r, "render"); st.Status != report.Fail {
		t.Errorf("render %s, want the missing v4.19 render to fail: %s", st.Status, st.Summary)
	}
	st := stageOf(t, r, "images")
	if st.Status == report.Skipped || !strings.Contains(st.Summary, "2 new or changed bundles") {
		t.Fatalf("images %s: %q, want the two odf bundles the render adds to v4.19 checked", st.Status, st.Summary)
	}
	tmpl := strings.Split(base.files[odfTemplate], "\n")
	onItsLine := 0
	for _, d := range st.Diagnostics {
		if d.File != odfTemplate || d.Line < 1 || d.Line > len(tmpl) || d.Package != odfPkg {
			t.Errorf("diagnostic not on the template: %s:%d %s", d.File, d.Line, d.Message)
			continue
		}
		if _, img, ok := strings.Cut(tmpl[d.Line-1], "image: "); ok && strings.Contains(d.Message, strings.TrimSpace(img)) {
			onItsLine++
		}
	}
	if len(st.Diagnostics) != 5 || onItsLine != 2 { // the two bundle images; their related images on line 1
		t.Errorf("%d diagnostics, %d on the template line naming their image: %+v", len(st.Diagnostics), onItsLine, st.Diagnostics)
	}
	if requests.Load() == 0 {
		t.Error("no image was asked of a registry")
	}
	t.Logf("images: %s %q %s; %d diagnostics", st.Status, st.Summary, st.Err, len(st.Diagnostics))
}
