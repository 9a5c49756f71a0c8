package bot

import (
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/bot/internal/gittest"
	"github.com/catalogbot/catalogbot/internal/githubtest"
)

// refusedPR opens pull request n of alice's head against main, delivers its opened event, and requires
// that it did not merge (why says what merging would have let through); it returns the last check run.
func (h *harness) refusedPR(n int, head, main, why string) githubtest.CheckRun {
	h.t.Helper()
	h.openPR(n, "alice", head, main)
	h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(n, "alice", head, main, nil))
	h.waitIdle()
	h.requireNotMerged(n, why)
	return h.lastCheckRun()
}

// File-model attacks (issue 33, item 6): the owners attribution, the validator, the drift gate and the image
// build read one catalog's files with the same rules (symlinks, .indexignore, non-regular files, names
// that differ only in case or by Unicode look-alikes).

// alice owns foo-operator only. In foo-operator's directory she adds bar-operator's deprecation as a file
// an .indexignore there excludes, and a symbolic link to it; she also adds foo's 0.3.0, so her change
// touches foo's blobs. The owners attribution read the link's target path (what git stores) and gave
// the files to foo; the validator followed the link and loaded the deprecation of bar; the build then
// refused the link, blocking every later publish. The link is refused at check time with the reason,
// and nothing merges.
func TestAttackSymlinkToIndexIgnoredFileDeprecatesAnotherPackage(t *testing.T) {
	for _, lc := range layouts("") {
		for _, target := range []string{"bar-deprecation.json", "../bar-operator/catalog.json"} {
			t.Run(lc.name+"/"+target, func(t *testing.T) {
				h := newHarness(t)
				main := h.seedLayout(lc)
				foo := lc.dir("foo-operator")
				link := foo + "/notes.json"
				files := map[string]string{
					foo + "/catalog.json": fbc("foo-operator", func(v string) string { return h.bundleImage("foo-operator", v) }, "0.1.0", "0.2.0", "0.3.0"),
					link:                  gittest.Symlink(target),
				}
				if !strings.Contains(target, "/") {
					files[foo+"/.indexignore"] = target + "\n"
					files[foo+"/"+target] = deprecation("bar-operator", "olm.package", "")
				}
				head := h.git.Commit("alice/links", main, "alice", "foo 0.3.0, and notes", files)
				cr := h.refusedPR(45, head, main, "a symbolic link in foo's directory deprecated bar")
				out := cr.Output.Summary + cr.Output.Text
				if cr.Conclusion != "failure" || !strings.Contains(out, link) || !strings.Contains(out, "symbolic link") {
					t.Errorf("check run %s, want a failure naming the symbolic link %s: %s\n%s", cr.Conclusion, link, cr.Output.Summary, cr.Output.Text)
				}
			})
		}
	}
}

// alice adds, next to foo-operator's catalog.json, a file whose name differs from it only in case or by a
// look-alike letter (a Cyrillic а, a fullwidth ｊ), holding a deprecation of her own package. A checkout
// on a case-insensitive or normalising file system lands one of the two, and a reviewer reads the pair
// as one file: what people and their tools see is not what the bot checked and the image holds. The name
// is refused at check time, and nothing merges.
func TestAttackLookAlikeCatalogFileNames(t *testing.T) {
	for _, lc := range layouts("") {
		for _, name := range []string{"Catalog.json", "c\u0430talog.json", "catalog.\uff4Ason"} {
			t.Run(lc.name+"/"+name, func(t *testing.T) {
				h := newHarness(t)
				main := h.seedLayout(lc)
				head := h.git.Commit("alice/twin", main, "alice", "deprecate foo", map[string]string{
					lc.dir("foo-operator") + "/" + name: deprecation("foo-operator", "olm.package", "")})
				cr := h.refusedPR(46, head, main, "a look-alike of catalog.json merged")
				out := cr.Output.Summary + cr.Output.Text
				if cr.Conclusion != "failure" || !strings.Contains(out, "foo-operator/"+name) || !strings.Contains(out, "catalog-file-refused") {
					t.Errorf("check run %s, want a failure refusing %s: %s\n%s", cr.Conclusion, name, cr.Output.Summary, cr.Output.Text)
				}
			})
		}
	}
}

// bar-operator's deprecation sits in foo-operator's directory on main (a maintainer put it there). alice,
// foo's owner, changes none of its bytes: with foo's 0.3.0 she adds an .indexignore naming it (hide), or,
// where main ignores it, deletes that .indexignore (reveal). The load then stops or starts reading the
// file, which removes or adds bar's blob as surely as editing it: the file is bar's by the blob it names,
// so bar's owner must approve, and nothing merges.
func TestAttackIndexIgnoreHidesAnotherPackagesBlob(t *testing.T) {
	for _, lc := range layouts("") {
		for _, op := range []string{"hide", "reveal"} {
			t.Run(lc.name+"/"+op, func(t *testing.T) {
				h := newHarness(t)
				h.seedLayout(lc)
				foo := lc.dir("foo-operator")
				planted := map[string]string{foo + "/notes.json": deprecation("bar-operator", "olm.package", "")}
				change := map[string]string{
					foo + "/catalog.json": fbc("foo-operator", func(v string) string { return h.bundleImage("foo-operator", v) }, "0.1.0", "0.2.0", "0.3.0"),
					foo + "/.indexignore": "notes.json\n",
				}
				if op == "reveal" {
					planted[foo+"/.indexignore"] = "notes.json\n"
					change[foo+"/.indexignore"] = ""
				}
				main := h.moveMain("bar-operator's deprecation, kept in foo-operator's directory", planted)
				head := h.git.Commit("alice/ignore", main, "alice", "foo 0.3.0", change)
				cr := h.refusedPR(47, head, main, "foo's owner made the load "+op+" bar's blob with an .indexignore")
				if cr.Conclusion != "failure" || !strings.Contains(cr.Output.Summary+cr.Output.Text, "alice is not an owner of package bar-operator") {
					t.Errorf("check run %s: %s\n%s", cr.Conclusion, cr.Output.Summary, cr.Output.Text)
				}
			})
		}
	}
}
