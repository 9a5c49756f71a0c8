package bot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// The bot publishes a template-driven repository through the pipeline's one publish path: each changed
// catalog to its own tag; a template merged without its render gets the rendered catalogs committed back,
// whose push publishes them.
func TestPushPublishesChangedCatalogs(t *testing.T) {
	h := newHarness(t)
	h.git.Git("config", "receive.denyCurrentBranch", "updateInstead") // the test remote has a work tree
	base := pushBase(t, h.reg.Host)
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
