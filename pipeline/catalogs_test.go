package pipeline_test

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/render/template"
	"github.com/catalogbot/catalogbot/report"
)

// The template-driven repository of these tests: two real packages of the community-operators layout
// whose templates pin bundles by digest, odf-node-recovery-operator (catalogs v4.12-v4.18) and
// nfs-provisioner-operator (v4.19-v4.22), so every catalog from v4.17 on is migrated.
const multiConfig = `apiVersion: catalogbot.dev/v1alpha1
kind: Config
maintainers: [catalog-admin]
catalogs:
  pattern: catalogs/{version}
  image: registry.example.test/index:{version}
  migrateLevel: bundle-object-to-csv-metadata
  migrateFrom: v4.17
`

const (
	nfsPkg      = "nfs-provisioner-operator"
	nfsTemplate = "operators/nfs-provisioner-operator/catalog-templates/basic-template.yaml"
)

var multiPackages = []string{nfsPkg, "odf-node-recovery-operator"}

// multiBase reads the packages' templates, ci.yaml and committed catalogs from the shared data.
func multiBase(t *testing.T) tree {
	root := shareddata.Dir(t, "fbc-templates")
	files := map[string]string{".catalogbot.yaml": multiConfig}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		parts := strings.Split(rel, "/")
		if len(parts) < 3 || !(parts[0] == "operators" && slices.Contains(multiPackages, parts[1]) ||
			parts[0] == "catalogs" && len(parts) > 3 && slices.Contains(multiPackages, parts[2])) {
			return nil
		}
		data, err := os.ReadFile(p)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree{files: files}
}

// refusingTransport fails every request: a run that must not touch a registry uses it.
type refusingTransport struct{ n *atomic.Int64 }

func (r refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.n.Add(1)
	return nil, errors.New("no registry in this test: " + req.URL.String())
}

func runMulti(t *testing.T, base, head tree, opts ...remote.Option) *report.Report {
	t.Helper()
	return runMultiWith(t, base, head, nil, opts...)
}

// runMultiWith is runMulti with the smoke stage's cluster settings.
func runMultiWith(t *testing.T, base, head tree, smoke *pipeline.SmokeInput, opts ...remote.Option) *report.Report {
	t.Helper()
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	g.branch(t, "pr", g.commit(ctx, t, base, "base", "catalog-admin"))
	g.commit(ctx, t, head, "change", "catalog-admin")
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: "pr", Author: "catalog-admin",
		RemoteOptions: append([]remote.Option{fastRetry}, opts...), Smoke: smoke})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return r
}

func stageOf(t *testing.T, r *report.Report, name string) report.Stage {
	t.Helper()
	for _, s := range r.Stages {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no %s stage in %+v", name, r.Stages)
	return report.Stage{}
}

func filesOf(st report.Stage, rule string) []string {
	var out []string
	for _, d := range st.Diagnostics {
		if d.Rule == rule {
			out = append(out, d.File)
		}
	}
	return out
}

// A change to a template that still renders the committed catalogs passes: every bundle comes from the
// base's committed catalogs (no registry request), and only the catalogs holding the package are validated.
func TestMultiCatalogTemplateMatchesCommitted(t *testing.T) {
	base := multiBase(t)
	head := base.with(map[string]string{nfsTemplate: base.files[nfsTemplate] + "# reviewed\n"})
	var requests atomic.Int64
	r := runMulti(t, base, head, remote.WithTransport(refusingTransport{&requests}))
	st := stageOf(t, r, "render")
	if st.Status != report.Pass || len(st.Diagnostics) != 0 {
		t.Errorf("render %s: %s %+v", st.Status, st.Summary, st.Diagnostics)
	}
	if !strings.Contains(st.Summary, "4 template mappings") {
		t.Errorf("render summary %q: want the 4 mappings of %s", st.Summary, nfsPkg)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d registry requests: every bundle is in the base's committed catalogs", n)
	}
	v := stageOf(t, r, "validate")
	if v.Status != report.Pass {
		t.Errorf("validate %s: %s %s %+v", v.Status, v.Summary, v.Err, v.Diagnostics)
	}
	for _, c := range []string{"v4.19", "v4.20", "v4.21", "v4.22"} {
		if !strings.Contains(v.Details, "`catalogs/"+c+"`") {
			t.Errorf("validate details do not list catalogs/%s:\n%s", c, v.Details)
		}
	}
	if strings.Contains(v.Details, "v4.18") {
		t.Errorf("validate covered a catalog without the touched package:\n%s", v.Details)
	}
	if st := stageOf(t, r, "graph"); st.Status != report.Pass || !strings.HasPrefix(st.Summary, "0 changed channels in 1 package across 0 catalogs; 4 of the catalogs") {
		t.Errorf("graph %s: %q, want no change in the 4 catalogs holding the package", st.Status, st.Summary)
	}
	if st := stageOf(t, r, "images"); st.Status != report.Skipped || !strings.Contains(st.Summary, "no new or changed bundle") {
		t.Errorf("images %s: %q, want it skipped: no bundle changed", st.Status, st.Summary)
	}
	if got := r.Verdict(); got != report.Pass {
		t.Errorf("verdict %s, want pass", got)
	}
}

// A stale render fails with a diff per catalog file that differs, each naming its catalog file.
func TestMultiCatalogStaleRender(t *testing.T) {
	base := multiBase(t)
	catFile := "catalogs/v4.20/" + nfsPkg + "/catalog.yaml"
	for _, tc := range []struct {
		name  string
		edit  map[string]string
		files []string
	}{
		{"template changed, catalogs not re-rendered",
			map[string]string{nfsTemplate: strings.Replace(base.files[nfsTemplate], "defaultChannel: alpha", "defaultChannel: beta", 1)},
			[]string{"catalogs/v4.19/" + nfsPkg + "/catalog.yaml", catFile, "catalogs/v4.21/" + nfsPkg + "/catalog.yaml", "catalogs/v4.22/" + nfsPkg + "/catalog.yaml"}},
		{"a catalog's only package removed, its mapping kept",
			map[string]string{"catalogs/v4.22/" + nfsPkg + "/catalog.yaml": ""},
			[]string{"catalogs/v4.22/" + nfsPkg + "/catalog.yaml"}},
		{"one committed catalog edited by hand",
			map[string]string{catFile: strings.Replace(base.files[catFile], "name: alpha", "name: alpha-edited", 1)},
			[]string{catFile}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var requests atomic.Int64
			r := runMulti(t, base, base.with(tc.edit), remote.WithTransport(refusingTransport{&requests}))
			st := stageOf(t, r, "render")
			if st.Status != report.Fail {
				t.Errorf("render %s, want fail: %s", st.Status, st.Summary)
			}
			if got := filesOf(st, "render-drift"); !slices.Equal(got, tc.files) {
				t.Errorf("drift on %q, want %q", got, tc.files)
			}
			// Each distinct diff is printed once, on the first file of the catalogs it is the same in; the
			// others refer to that file, which does carry it.
			withDiff := map[string]bool{}
			for _, d := range st.Diagnostics {
				if d.Rule == "render-drift" && strings.Contains(d.Message, "--- committed/"+d.File) && strings.Contains(d.Message, "+++ rendered/"+d.File) {
					withDiff[d.File] = true
				}
			}
			for _, d := range st.Diagnostics {
				if d.Rule != "render-drift" || withDiff[d.File] {
					continue
				}
				_, ref, ok := strings.Cut(d.Message, ": the same diff as ")
				if ref, _, _ = strings.Cut(ref, " "); !ok || !withDiff[ref] {
					t.Errorf("drift on %s neither has its diff nor refers to a file that has it: %s", d.File, d.Message)
				}
			}
			if r.Verdict() != report.Fail {
				t.Errorf("verdict %s, want fail", r.Verdict())
			}
		})
	}
}

// withBundle adds nfs-provisioner-operator v0.1.0 (image) to the channel and entries of its template.
func withBundle(t *testing.T, tmpl, image string) string {
	t.Helper()
	out := strings.Replace(tmpl, "    replaces: nfs-provisioner-operator.v0.0.8\n",
		"    replaces: nfs-provisioner-operator.v0.0.8\n  - name: nfs-provisioner-operator.v0.1.0\n    replaces: nfs-provisioner-operator.v0.0.9\n", 1)
	out = strings.Replace(out, "schema: olm.template.basic\n", "- image: "+image+"\n  schema: olm.bundle\nschema: olm.template.basic\n", 1)
	if !strings.Contains(out, "v0.1.0") || !strings.Contains(out, image) {
		t.Fatalf("template edit did not apply:\n%s", out)
	}
	return out
}

// evilRegistry is a registry that counts the requests for its evil/ repositories.
func evilRegistry(t *testing.T, n *atomic.Int64) *registrytest.Registry {
	return registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/evil/") {
				n.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
}

// Attack: a template names a bundle on a registry the base configuration does not allow. The render
// refuses it before contacting the registry.
func TestMultiCatalogTemplateRegistryNotAllowed(t *testing.T) {
	base := multiBase(t)
	base.files[".catalogbot.yaml"] = multiConfig + "images:\n  allowedRegistries: [quay.io]\n"
	var evil atomic.Int64
	reg := evilRegistry(t, &evil)
	tmpl := withBundle(t, base.files[nfsTemplate], reg.Host+"/evil/nfs-provisioner-operator@sha256:"+strings.Repeat("e", 64))
	r := runMulti(t, base, base.with(map[string]string{nfsTemplate: tmpl}))
	st := stageOf(t, r, "render")
	if st.Status != report.Fail || len(st.Diagnostics) == 0 {
		t.Fatalf("render %s (%s), want a failure", st.Status, st.Summary)
	}
	for _, d := range st.Diagnostics {
		if d.File != nfsTemplate || !strings.Contains(d.Message, "not an allowed registry") {
			t.Errorf("want a registry-not-allowed error on %s, got %s: %s", nfsTemplate, d.File, d.Message)
		}
	}
	if n := evil.Load(); n != 0 {
		t.Errorf("%d requests reached the registry the configuration does not allow", n)
	}
}

// Attack: the pull request adds a bundle to a template and commits, in its own catalogs, a render of that
// bundle it made up. Seeded from the pull request's catalogs, the render would reproduce the plant and
// pass; seeded from the base's, the bundle must be pulled, and the image does not exist.
func TestMultiCatalogPlantedCatalogDoesNotSeed(t *testing.T) {
	ctx := t.Context()
	base := multiBase(t)
	var evil atomic.Int64
	reg := evilRegistry(t, &evil)
	image := reg.Host + "/evil/nfs-provisioner-operator@sha256:" + strings.Repeat("e", 64)
	tmpl := withBundle(t, base.files[nfsTemplate], image)

	// The plant: v0.0.9's committed render, renamed and pointed at the made-up image.
	seedFile := "catalogs/v4.19/" + nfsPkg + "/catalog.yaml"
	committed := base.files[seedFile]
	i := strings.Index(committed, "---\nimage: quay.io/community-operator-pipeline-prod/nfs-provisioner-operator@sha256:ab7b")
	if i < 0 {
		t.Fatal("no v0.0.9 bundle in the committed catalog")
	}
	plant := committed[i:]
	plant = strings.Replace(plant, plant[len("---\nimage: "):strings.Index(plant, "\nname:")], image, 1)
	plant = strings.ReplaceAll(plant, "nfs-provisioner-operator.v0.0.9", "nfs-provisioner-operator.v0.1.0")
	plant = strings.Replace(plant, "version: 0.0.9", "version: 0.1.0", 1)
	headFiles := map[string]string{nfsTemplate: tmpl}
	// What the attacker commits is the render with the plant in the cache, so it passes if the plant seeds.
	workDir := t.TempDir()
	for f, data := range base.with(map[string]string{nfsTemplate: tmpl}).files {
		p := filepath.Join(workDir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cats := []template.Catalog{{Name: "v4.19", Dir: "catalogs/v4.19", MigrateLevel: "bundle-object-to-csv-metadata"},
		{Name: "v4.20", Dir: "catalogs/v4.20", MigrateLevel: "bundle-object-to-csv-metadata"},
		{Name: "v4.21", Dir: "catalogs/v4.21", MigrateLevel: "bundle-object-to-csv-metadata"},
		{Name: "v4.22", Dir: "catalogs/v4.22", MigrateLevel: "bundle-object-to-csv-metadata"}}
	jobs, _, err := template.Plan(workDir, cats, nfsPkg)
	if err != nil || len(jobs) != 4 {
		t.Fatalf("plan: %d jobs, %v", len(jobs), err)
	}
	store := template.NewStore("")
	planted := fstest.MapFS{seedFile: {Data: []byte(committed + plant)}}
	if err := template.SeedFromFS(ctx, store, planted, cats, jobs); err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		data, err := j.Render(ctx, workDir, &template.Images{Store: store, Offline: true})
		if err != nil {
			t.Fatalf("rendering with the plant in the cache: %v", err)
		}
		headFiles[j.Output()] = string(data)
	}
	if !strings.Contains(headFiles[seedFile], image) {
		t.Fatal("the attacker's render does not hold the planted bundle")
	}

	r := runMulti(t, base, base.with(headFiles))
	st := stageOf(t, r, "render")
	if st.Status != report.Fail {
		t.Fatalf("render %s, want fail: the planted catalog seeded the cache (%s)", st.Status, st.Summary)
	}
	if got := filesOf(st, "template-render"); len(got) != 4 || got[0] != nfsTemplate {
		t.Errorf("render errors on %q, want 4 on %s", got, nfsTemplate)
	}
	if evil.Load() == 0 {
		t.Error("the new bundle was never asked of its registry: it came from the pull request's catalogs")
	}
	if r.Verdict() != report.Fail {
		t.Errorf("verdict %s, want fail", r.Verdict())
	}
}

// Attack: the pull request replaces a rendered catalog with a symlink to a file of the machine running
// the check. The drift gate refuses the link as every reader of a catalog does (catalog-file-refused),
// never reading it; its content never reaches the report.
func TestMultiCatalogSymlinkedCatalogIsNotRead(t *testing.T) {
	ctx := t.Context()
	base := multiBase(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("token: s3cr3t-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	catFile := "catalogs/v4.21/" + nfsPkg + "/catalog.yaml"
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	g.branch(t, "pr", g.commit(ctx, t, base, "base", "catalog-admin"))
	head := base.with(map[string]string{catFile: ""})
	g.commit(ctx, t, head, "change", "catalog-admin")
	// the tree helper writes regular files only: add the link and commit it by hand
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(filepath.FromSlash(catFile))), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(dir, filepath.FromSlash(catFile))); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=catalog-admin", "-c", "user.email=a@example.test", "commit", "-q", "-m", "symlink"}, {"ls-files", "-s", catFile}} {
		out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %s: %v\n%s", args, err, out)
		}
		if args[0] == "ls-files" && !strings.HasPrefix(string(out), "120000 ") {
			t.Fatalf("%s is not committed as a symlink: %s", catFile, out)
		}
	}
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	r, err := pipeline.Run(ctx, pipeline.Input{Repo: repo, Base: "main", Head: "pr", Author: "catalog-admin",
		RemoteOptions: []remote.Option{remote.WithTransport(refusingTransport{&requests})}})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text, r, report.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String()+report.Markdown(r, 0), "s3cr3t") {
		t.Fatalf("the report holds the symlink target's content:\n%s", text.String())
	}
	st := stageOf(t, r, "render")
	if got := filesOf(st, catalog.RuleRefused); !slices.Equal(got, []string{catFile}) || st.Status != report.Fail {
		t.Errorf("render %s, refused %q, want a failure refusing the link %s", st.Status, got, catFile)
	}
}
