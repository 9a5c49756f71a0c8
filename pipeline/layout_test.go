package pipeline_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/catalogbot/catalogbot/gitrepo"
	"github.com/catalogbot/catalogbot/pipeline"
)

// A prepared change attributes files by the packages their blobs name, in both layouts: a deprecation of
// bar in foo's directory is bar's; a file naming no package in a directory whose package is otherwise
// untouched is nobody's (a maintainer's); operators/<pkg>/ is pkg's only in a template-driven layout.
func TestChangeAttributesByBlobIdentity(t *testing.T) {
	pkg := func(name string) string {
		return `{"schema": "olm.package", "name": "` + name + `", "defaultChannel": "stable"}` + "\n"
	}
	deprecation := `{"schema": "olm.deprecations", "package": "bar", "entries": [{"reference": {"schema": "olm.package"}, "message": "gone"}]}` + "\n"
	for _, tc := range []struct {
		name, config, dir string
		want              map[string][]string
		other             []string
	}{
		{"single-catalog", "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\n", "catalog",
			map[string][]string{"bar": {"catalog/foo/notes.json"}},
			[]string{"README.md", "catalog/foo/README.md", "operators/baz/ci.yaml"}},
		{"template-driven", "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\ncatalogs:\n  pattern: catalogs/{version}\n", "catalogs/v4.19",
			map[string][]string{"bar": {"catalogs/v4.19/foo/notes.json"}, "baz": {"operators/baz/ci.yaml"}},
			[]string{"README.md", "catalogs/v4.19/foo/README.md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := map[string]string{".catalogbot.yaml": tc.config, tc.dir + "/foo/catalog.json": pkg("foo"), tc.dir + "/bar/catalog.json": pkg("bar")}
			head := map[string]string{tc.dir + "/foo/notes.json": deprecation, tc.dir + "/foo/README.md": "# foo\n",
				"operators/baz/ci.yaml": "reviewers: [x]\n", "README.md": "# repo\n"}
			repo := changeRepo(t, base, head, "alice")
			ch := prepareMerge(t, repo)
			at := ch.Attribution
			if len(at.Packages) != len(tc.want) {
				t.Errorf("packages %v, want %v", at.Packages, tc.want)
			}
			for p, files := range tc.want {
				if !slices.Equal(at.Packages[p], files) {
					t.Errorf("package %s: files %v, want %v", p, at.Packages[p], files)
				}
			}
			if !slices.Equal(at.Other, tc.other) {
				t.Errorf("other %v, want %v", at.Other, tc.other)
			}
		})
	}
}

// TestAttackApprovalByDirectoryOwner: bar's owner puts a deprecation of bar in foo's directory and foo's
// owner approves. Approvals are weighed over the packages the change's blobs name (as the owners stage
// attributes it), in both layouts, so only bar's owners (and maintainers) may approve it: foo's owner,
// who owns the directory, does not count. (Before, the bot and the Action took the catalog's top
// directories: foo's owner's approval counted.)
func TestAttackApprovalByDirectoryOwner(t *testing.T) {
	pkg := func(name string) string {
		return `{"schema": "olm.package", "name": "` + name + `", "defaultChannel": "stable"}` + "\n"
	}
	deprecation := `{"schema": "olm.deprecations", "package": "bar", "entries": [{"reference": {"schema": "olm.package"}, "message": "gone"}]}` + "\n"
	owners := "owners:\n  foo: [fiona]\n  bar: [bob]\nmerge:\n  requiredApprovals: 1\n"
	for _, tc := range []struct{ name, config, dir string }{
		{"single-catalog", "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\n" + owners, "catalog"},
		{"template-driven", "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\ncatalogs:\n  pattern: catalogs/{version}\n" + owners, "catalogs/v4.19"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := map[string]string{".catalogbot.yaml": tc.config, tc.dir + "/foo/catalog.json": pkg("foo"), tc.dir + "/bar/catalog.json": pkg("bar")}
			head := map[string]string{tc.dir + "/foo/notes.json": deprecation}
			repo := changeRepo(t, base, head, "bob")
			ch := prepareMerge(t, repo)
			if pkgs := ch.Packages(); !slices.Equal(pkgs, []string{"bar"}) || ch.Outside() {
				t.Fatalf("changed packages %v (outside %v), want [bar]", pkgs, ch.Outside())
			}
			pol, err := ch.ApprovalPolicy()
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := pol.PackageOwners["foo"]; ok || !slices.Equal(pol.PackageOwners["bar"], []string{"bob"}) {
				t.Errorf("approvers by package %v: want bar's owner only", pol.PackageOwners)
			}
		})
	}
}

// changeRepo is a repository whose main holds base and whose branch pr adds head's files to it, committed
// by author.
func changeRepo(t *testing.T, base, head map[string]string, author string) *gitrepo.Repo {
	t.Helper()
	ctx := t.Context()
	files := maps.Clone(base)
	maps.Copy(files, head)
	dir := filepath.Join(t.TempDir(), "repo")
	g := initRepo(t, dir)
	g.commit(ctx, t, tree{files: base}, "base", "catalog-admin")
	g.branch(t, "pr", g.commit(ctx, t, tree{files: base}, "base again", "catalog-admin"))
	g.commit(ctx, t, tree{files: files}, "change", author)
	repo, err := gitrepo.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return repo
}

// prepareMerge prepares the merge of branch pr into main under main's rules.
func prepareMerge(t *testing.T, repo *gitrepo.Repo) *pipeline.Change {
	t.Helper()
	rules, st := pipeline.LoadRules(repo, "main")
	if rules == nil {
		t.Fatalf("rules: %+v", st)
	}
	ch, err := pipeline.PrepareMerge(t.Context(), repo, rules, "main", "pr")
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
