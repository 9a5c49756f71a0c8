package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/render/release"
	"github.com/catalogbot/catalogbot/render/template"
)

// TestInitBundleImagePattern is issue 35 item 1's "done": on the shared template repository, init writes
// release.bundleImage, the pattern its templates' bundle images show, and says how many it explains.
// The pattern is not written down here: it comes from the data. Every template's images, each with the
// version of the bundle the committed catalogs hold under it, are checked against release.Image: the
// count init reports is exactly the images the pattern reproduces, at least four of five, and every
// package with images by tag has one among them; images by digest do not count, and init says so.
func TestInitBundleImagePattern(t *testing.T) {
	repo := communityRepo(t)
	if err := os.Remove(filepath.Join(repo, config.ConfigFile)); err != nil {
		t.Fatal(err)
	}
	out, cfg := initIn(t, repo)
	pattern := cfg.Release.BundleImage
	if !strings.Contains(pattern, "{package}") || !strings.Contains(pattern, "{version}") {
		t.Fatalf("release.bundleImage %q: no pattern with {package} and {version}\n%s", pattern, out)
	}

	versions := map[string]string{}
	cats, _ := filepath.Glob(filepath.Join(repo, "catalogs", "*"))
	for _, dir := range cats {
		res, err := catalog.LoadDir(context.Background(), dir, catalog.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range res.Catalog.Bundles {
			versions[b.Package+" "+b.Image] = b.Parsed.Packages[0].Version
		}
	}
	templates, _ := filepath.Glob(filepath.Join(repo, "operators", "*", "catalog-templates", "*.yaml"))
	seen := map[string]bool{}
	explained, counted, digests := 0, 0, 0
	pkgs, pkgsExplained := map[string]bool{}, map[string]bool{}
	for _, file := range templates {
		pkg := filepath.Base(filepath.Dir(filepath.Dir(file)))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		images, err := template.BundleImages(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, img := range images {
			if seen[pkg+" "+img] {
				continue
			}
			seen[pkg+" "+img] = true
			v := versions[pkg+" "+img]
			switch {
			case strings.Contains(img, "@sha256:"):
				digests++
				continue
			case v == "":
				continue
			}
			counted++
			pkgs[pkg] = true
			if got, err := release.Image(pattern, pkg, v); err == nil && got == img {
				explained++
				pkgsExplained[pkg] = true
			}
		}
	}
	t.Logf("%s explains %d of %d images by tag (%d packages); %d by digest", pattern, explained, counted, len(pkgs), digests)
	if explained*5 < counted*4 || len(pkgsExplained) != len(pkgs) || digests == 0 {
		t.Errorf("%s reproduces %d of %d images, of %d of %d packages (%d by digest)", pattern, explained, counted, len(pkgsExplained), len(pkgs), digests)
	}
	for _, want := range []string{
		fmt.Sprintf("release.bundleImage: %s explains %d of %d images the templates name by tag (%d packages)", pattern, explained, counted, len(pkgs)),
		fmt.Sprintf("not counted, for or against: %d images by digest (a digest shows no version)", digests),
		"release:\n  # explains ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}
}
