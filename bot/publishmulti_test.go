package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// The bot publishes a template-driven repository through the pipeline's one publish path: each changed
// catalog to its own tag; a template merged without its render gets the rendered catalogs committed back,
// whose push publishes them.
func TestPushPublishesChangedCatalogs(t *testing.T) {
	h := newHarness(t)
	h.git.Git("config", "receive.denyCurrentBranch", "updateInstead") // the test remote has a work tree
	base := registrytest.PushBase(t, h.reg.Host)
	index := h.reg.Host + "/ops/index"
	cfg := repoConfig + "catalogs:\n  pattern: catalogs/{version}\n  image: " + index + ":{version}\n" +
		"  migrateLevel: bundle-object-to-csv-metadata\n  migrateFrom: v4.17\npublish:\n  base: " + base + "\n  commitRendered: true\n"
	main := h.seedMain(cfg)

	// nfs-provisioner-operator from the shared data: its template, ci.yaml and renders in v4.19-v4.22
	const pkg = "nfs-provisioner-operator"
	tmplPath := "operators/" + pkg + "/catalog-templates/basic-template.yaml"
	root := shareddata.Dir(t, "fbc-templates")
	files := map[string]string{}
	read := func(rel string) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = string(data)
	}
	read(tmplPath)
	read("operators/" + pkg + "/ci.yaml")
	versions := []string{"v4.19", "v4.20", "v4.21", "v4.22"}
	for _, v := range versions {
		read("catalogs/" + v + "/" + pkg + "/catalog.yaml")
	}
	after := h.label(h.git.Commit("main", main, "catalog-admin", "nfs-provisioner-operator", files), "AFTER")
	pushEdits := func(before, after string) map[string]any {
		return repoEdits(map[string]any{"ref": "refs/heads/main", "before": before, "after": after, "deleted": false,
			"created": false, "base_ref": nil, "repository.master_branch": "main"})
	}
	h.deliver("push", "push/payload.json", pushEdits(main, after))
	h.waitIdle()
	sts := h.gh.Statuses(repoFull, after)
	if len(sts) != 2 || sts[1].State != "success" || !strings.Contains(sts[1].Description, "pushed catalogs v4.19-v4.22") {
		t.Fatalf("statuses of the pushed commit: %+v\n%s", sts, h.logs.String())
	}
	first := map[string]string{}
	for _, v := range versions {
		first[v] = digestOf(t, index+":"+v)
	}

	// The template changes without its render: the render is committed back, nothing is published.
	tmpl := strings.Replace(strings.Replace(files[tmplPath], "  name: alpha\n", "  name: beta\n", 1), "defaultChannel: alpha", "defaultChannel: beta", 1)
	if strings.Contains(tmpl, "alpha") {
		t.Fatalf("template edit did not apply:\n%s", tmpl)
	}
	stale := h.label(h.git.Commit("main", after, "catalog-admin", "template only", map[string]string{tmplPath: tmpl}), "STALE")
	h.deliver("push", "push/payload.json", pushEdits(after, stale))
	h.waitIdle()
	rendered := h.label(h.git.Git("rev-parse", "main"), "RENDERED")
	if rendered == stale {
		t.Fatalf("nothing was committed back; statuses %+v\n%s", h.gh.Statuses(repoFull, stale), h.logs.String())
	}
	if diff := h.git.Git("diff", "--name-only", stale, rendered); diff != strings.Join(func() []string {
		var out []string
		for _, v := range versions {
			out = append(out, "catalogs/"+v+"/"+pkg+"/catalog.yaml")
		}
		return out
	}(), "\n") {
		t.Errorf("the rendered commit changed:\n%s", diff)
	}
	if got := h.git.Git("show", rendered+":catalogs/v4.21/"+pkg+"/catalog.yaml"); !strings.Contains(got, "name: beta") {
		t.Errorf("the committed render lacks the template's change:\n%s", got)
	}
	for _, v := range versions {
		if d := digestOf(t, index+":"+v); d != first[v] {
			t.Errorf("%s moved from a stale render", v)
		}
	}

	// The rendered commit's push publishes the four catalogs.
	h.deliver("push", "push/payload.json", pushEdits(stale, rendered))
	h.waitIdle()
	sts = h.gh.Statuses(repoFull, rendered)
	if len(sts) != 2 || sts[1].State != "success" || !strings.Contains(sts[1].Description, "pushed catalogs v4.19-v4.22") {
		t.Fatalf("statuses of the rendered commit: %+v", sts)
	}
	for _, v := range versions {
		if d := digestOf(t, index+":"+v); d == first[v] {
			t.Errorf("%s was not republished", v)
		}
	}
}

// nfsRepo seeds main with a template-driven configuration and nfs-provisioner-operator (reviewer Jooho)
// from the shared data, rendered into v4.19-v4.22; it returns main and the template's path and content.
func nfsRepo(t *testing.T, h *harness) (main, tmplPath, tmpl string) {
	t.Helper()
	cfg := repoConfig + "catalogs:\n  pattern: catalogs/{version}\n  image: " + h.reg.Host + "/ops/index:{version}\n" +
		"  migrateLevel: bundle-object-to-csv-metadata\n  migrateFrom: v4.17\n"
	seeded := h.seedMain(cfg)
	const pkg = "nfs-provisioner-operator"
	tmplPath = "operators/" + pkg + "/catalog-templates/basic-template.yaml"
	root := shareddata.Dir(t, "fbc-templates")
	files := map[string]string{}
	for _, rel := range []string{tmplPath, "operators/" + pkg + "/ci.yaml", "catalogs/v4.19/" + pkg + "/catalog.yaml",
		"catalogs/v4.20/" + pkg + "/catalog.yaml", "catalogs/v4.21/" + pkg + "/catalog.yaml", "catalogs/v4.22/" + pkg + "/catalog.yaml"} {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		files[rel] = string(data)
	}
	main = h.label(h.git.Commit("main", seeded, "catalog-admin", "nfs-provisioner-operator", files), "MAIN2")
	h.gh.SetRef(repoFull, "heads/main", main)
	return main, tmplPath, files[tmplPath]
}

// The bot's pull request check on a template-driven repository: a template change by the package's
// ci.yaml reviewer passes and merges; the same change by a stranger fails with an annotation on the
// template and is not merged.
func TestPullRequestTemplateDrivenReviewer(t *testing.T) {
	for _, tc := range []struct {
		author string
		merged bool
	}{{"Jooho", true}, {"mallory", false}} {
		t.Run(tc.author, func(t *testing.T) {
			h := newHarness(t)
			main, tmplPath, tmpl := nfsRepo(t, h)
			head := h.label(h.git.Commit(tc.author+"/nfs", main, tc.author, "reviewed", map[string]string{tmplPath: tmpl + "# reviewed\n"}), "HEAD")
			h.openPR(3, tc.author, head, main)
			h.deliver("pull_request", "pull_request/opened.payload.json", prEdits(3, tc.author, head, main, nil))
			h.waitIdle()
			if merged, _ := h.gh.Merged(repoFull, 3); merged != tc.merged {
				t.Fatalf("merged %v, want %v; check runs %+v\n%s", merged, tc.merged, h.gh.CheckRuns(repoFull), h.logs.String())
			}
			if tc.merged {
				return
			}
			runs := h.gh.CheckRuns(repoFull)
			if len(runs) != 1 || runs[0].Conclusion != "failure" {
				t.Fatalf("check runs: %+v", runs)
			}
			onTemplate := false
			for _, a := range runs[0].Output.Annotations {
				if a.Path == tmplPath && strings.Contains(a.Message, "not an owner") {
					onTemplate = true
				}
			}
			if !onTemplate {
				t.Errorf("no owners annotation on %s: %+v", tmplPath, runs[0].Output.Annotations)
			}
		})
	}
}
