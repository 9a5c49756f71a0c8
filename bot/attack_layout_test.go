package bot

import (
	"encoding/json"
	"strings"
	"testing"
)

// Layout attacks (issue 23, items 2 and 3): the gates hold the same in a single-catalog repository and in
// a template-driven one (catalogs: in .catalogbot.yaml, one catalog per version).

// layoutCase is one repository layout: its configuration and where a package's catalog file lives.
type layoutCase struct {
	name   string
	config string
	dir    func(pkg string) string // the directory of pkg's catalog
}

func layouts(extra string) []layoutCase {
	return []layoutCase{
		{"single-catalog", repoConfig + extra, func(pkg string) string { return "catalog/" + pkg }},
		{"template-driven", repoConfig + extra + "catalogs:\n  pattern: catalogs/{version}\n",
			func(pkg string) string { return "catalogs/v4.19/" + pkg }},
	}
}

// seedLayout commits the base revision of layout lc (configuration, foo-operator at 0.1.0 and 0.2.0,
// bar-operator at 0.1.0) on main and points GitHub's main at it.
func (h *harness) seedLayout(lc layoutCase) string {
	h.t.Helper()
	files := map[string]string{".catalogbot.yaml": lc.config}
	for pkg, versions := range map[string][]string{"foo-operator": {"0.1.0", "0.2.0"}, "bar-operator": {"0.1.0"}} {
		files[lc.dir(pkg)+"/catalog.json"] = fbc(pkg, func(v string) string { return h.bundleImage(pkg, v) }, versions...)
	}
	sha := h.label(h.git.Commit("main", "", "catalog-admin", "base", files), "MAIN")
	h.gh.SetRef(repoFull, "heads/main", sha)
	return sha
}

// deprecation is an olm.deprecations blob for pkg with one entry (reference schema, optional name).
func deprecation(pkg, schema, name string) string {
	ref := map[string]string{"schema": schema}
	if name != "" {
		ref["name"] = name
	}
	data, _ := json.MarshalIndent(map[string]any{"schema": "olm.deprecations", "package": pkg,
		"entries": []any{map[string]any{"reference": ref, "message": "deprecated by " + pkg + "'s maintainers"}}}, "", "  ")
	return string(data) + "\n"
}

// alice owns foo-operator only. She adds, in foo-operator's directory, a file holding an olm.deprecations
// blob for bar-operator: the file belongs to the package its blob names, so the owners stage needs bar's
// owner, and nothing merges.
func TestAttackOwnersByDirectoryDeprecationOfAnotherPackage(t *testing.T) {
	for _, lc := range layouts("") {
		t.Run(lc.name, func(t *testing.T) {
			h := newHarness(t)
			main := h.seedLayout(lc)
			head := h.git.Commit("alice/notes", main, "alice", "notes for foo", map[string]string{
				lc.dir("foo-operator") + "/notes.json": deprecation("bar-operator", "olm.package", "")})
			h.openPR(40, "alice", head, main)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(40, "alice", head, main, nil))
			h.waitIdle()
			h.requireNotMerged(40, "foo's owner deprecated bar from foo's directory")
			cr := h.lastCheckRun()
			if cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary+cr.Output.Text, "alice is not an owner of package bar-operator") {
				t.Errorf("check run %s: %s\n%s", cr.Conclusion, cr.Output.Summary, cr.Output.Text)
			}
		})
	}
}

// alice opens two pull requests, each adding one olm.deprecations blob for foo-operator (a package may have
// only one): each validates alone. The first merges; before the second merges the bot sees that the base
// moved and checks the merge of the second into the new tip instead of merging it on its old check: that
// merge holds both blobs and fails, so main never holds two deprecation blobs for one package.
func TestAttackTwoPRsDeprecationsMergeWithoutRecheck(t *testing.T) {
	for _, lc := range layouts("  requiredLabels: [lgtm]\n") {
		t.Run(lc.name, func(t *testing.T) {
			h := newHarness(t)
			main := h.seedLayout(lc)
			first := map[string]string{lc.dir("foo-operator") + "/deprecations.json": deprecation("foo-operator", "olm.package", "")}
			second := map[string]string{lc.dir("foo-operator") + "/old-bundle.json": deprecation("foo-operator", "olm.bundle", "foo-operator.v0.1.0")}
			head1 := h.git.Commit("alice/deprecate", main, "alice", "deprecate foo", first)
			head2 := h.git.Commit("alice/deprecate-old", main, "alice", "deprecate foo 0.1.0", second)
			for n, head := range map[int]string{41: head1, 42: head2} {
				h.openPR(n, "alice", head, main)
				h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "alice", head, main, nil))
			}
			h.waitIdle()
			if runs := h.gh.CheckRuns(repoFull); len(runs) != 2 || runs[0].Conclusion != "success" || runs[1].Conclusion != "success" {
				t.Fatalf("each pull request alone should pass: %+v", runs)
			}
			h.addLabel(41, "lgtm", head1, main)
			h.waitIdle()
			if merged, _ := h.gh.Merged(repoFull, 41); !merged {
				t.Fatalf("the first pull request did not merge:\n%s", h.readiness(41))
			}
			h.moveMain("Change 41 (#41)", first) // what GitHub's merge did to main
			h.addLabel(42, "lgtm", head2, main)
			h.waitIdle()
			h.requireNotMerged(42, "merged on a check that never saw foo-operator's other deprecation blob")
			if cr := h.lastCheckRun(); cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary+cr.Output.Text, "foo-operator") {
				t.Errorf("the check of the merge into the new tip: %s, want a failure naming foo-operator:\n%s\n%s", cr.Conclusion, cr.Output.Summary, cr.Output.Text)
			}
		})
	}
}

// alice owns foo-operator. In the template-driven layout she adds a catalog directory (catalogs/v4.99: a
// new catalog, published as a new image) holding only foo-operator's catalog: its files are not package
// content her ownership covers, since adding a catalog is a maintainer's; nothing merges.
func TestAttackNewCatalogDirectoryIsNotPackageContent(t *testing.T) {
	lc := layouts("")[1]
	h := newHarness(t)
	main := h.seedLayout(lc)
	rogue := "catalogs/v4.99/foo-operator/catalog.json"
	head := h.git.Commit("alice/v4.99", main, "alice", "foo-operator in a new catalog", map[string]string{
		rogue: fbc("foo-operator", func(v string) string { return h.bundleImage("foo-operator", v) }, "0.1.0", "0.2.0")})
	h.openPR(43, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(43, "alice", head, main, nil))
	h.waitIdle()
	h.requireNotMerged(43, "a package owner added a catalog directory")
	cr := h.lastCheckRun()
	if cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary+cr.Output.Text, rogue) {
		t.Errorf("check run %s, want a failure naming %s: %s\n%s", cr.Conclusion, rogue, cr.Output.Summary, cr.Output.Text)
	}
}

// A blob for bar-operator sits in foo-operator's directory on main (a maintainer put it there). alice,
// foo's owner, renames its file or deletes it: the file is bar's by the blob it names at the base, so
// bar's owner must approve, in both layouts, and nothing merges.
func TestAttackRenameOrDeletePlantedBlob(t *testing.T) {
	for _, lc := range layouts("") {
		for _, op := range []string{"rename", "delete"} {
			t.Run(lc.name+"/"+op, func(t *testing.T) {
				h := newHarness(t)
				h.seedLayout(lc)
				planted := lc.dir("foo-operator") + "/notes.json"
				blob := deprecation("bar-operator", "olm.package", "")
				main := h.moveMain("bar-operator's deprecation, kept in foo-operator's directory", map[string]string{planted: blob})
				files := map[string]string{planted: ""}
				if op == "rename" {
					files[lc.dir("foo-operator")+"/renamed.json"] = blob
				}
				head := h.git.Commit("alice/"+op, main, "alice", op+" the notes", files)
				h.openPR(44, "alice", head, main)
				h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(44, "alice", head, main, nil))
				h.waitIdle()
				h.requireNotMerged(44, "foo's owner "+op+"d bar's blob")
				cr := h.lastCheckRun()
				if cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary+cr.Output.Text, "alice is not an owner of package bar-operator") {
					t.Errorf("check run %s: %s\n%s", cr.Conclusion, cr.Output.Summary, cr.Output.Text)
				}
			})
		}
	}
}
