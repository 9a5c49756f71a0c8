package shareddata

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The release world of the App's and the Action's release tests: kube-green from the shared templates
// repository, whose bundle 0.7.2 a push merges.
const (
	ReleasePackage = "kube-green"
	ReleaseVersion = "0.7.2"
	ReleaseDir     = "operators/" + ReleasePackage + "/" + ReleaseVersion
)

// ReleaseCatalogs are the catalogs ReleaseTemplates' ci.yaml maps kube-green's template to.
var ReleaseCatalogs = []string{"v4.19", "v4.20", "v4.21"}

// ReleaseTemplates are kube-green's files of the shared templates repository (fbc-templates): its basic
// template, its ci.yaml mapping the template to ReleaseCatalogs only, and its committed catalogs there.
func ReleaseTemplates(t testing.TB) map[string]string {
	t.Helper()
	root := Dir(t, "fbc-templates")
	read := func(rel string) string {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	files := map[string]string{}
	ci := read("operators/" + ReleasePackage + "/ci.yaml")
	mapped := strings.Replace(ci, `["v4.15", "v4.16", "v4.17", "v4.18", "v4.19", "v4.20", "v4.21"]`, `["v4.19", "v4.20", "v4.21"]`, 1)
	if mapped == ci {
		t.Fatalf("kube-green's ci.yaml maps other catalogs:\n%s", ci)
	}
	files["operators/"+ReleasePackage+"/ci.yaml"] = mapped
	tmpl := "operators/" + ReleasePackage + "/catalog-templates/basic-template.yaml"
	files[tmpl] = read(tmpl)
	for _, v := range ReleaseCatalogs {
		rel := "catalogs/" + v + "/" + ReleasePackage + "/catalog.yaml"
		files[rel] = read(rel)
	}
	return files
}

// ReleaseBundle is kube-green 0.7.2 as its bundle pull request adds it: the shared data's 0.7.1 bundle as
// version 0.7.2 replacing 0.7.1, with a release-config.yaml releasing it into the alpha channel; the
// paths are under ReleaseDir.
func ReleaseBundle(t testing.TB) map[string]string {
	t.Helper()
	src := filepath.Join(Dir(t, "bundles"), ReleasePackage, "0.7.1")
	files := map[string]string{}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		files[ReleaseDir+"/"+filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	csv := ReleaseDir + "/manifests/kube-green.clusterserviceversion.yaml"
	edited := strings.NewReplacer("  name: kube-green.v0.7.1\n", "  name: kube-green.v0.7.2\n",
		"  replaces: kube-green.v0.7.0\n", "  replaces: kube-green.v0.7.1\n", "  version: 0.7.1\n", "  version: 0.7.2\n").Replace(files[csv])
	if strings.Count(edited, "0.7.2") != 2 {
		t.Fatalf("the 0.7.1 CSV did not take version 0.7.2:\n%s", edited)
	}
	files[csv] = edited
	files[ReleaseDir+"/release-config.yaml"] = "catalog_templates:\n- template_name: basic-template.yaml\n  channels:\n  - alpha\n  replaces: kube-green.v0.7.1\n"
	return files
}
