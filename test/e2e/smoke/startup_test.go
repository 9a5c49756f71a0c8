//go:build e2e

package smoke

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/build"
	"github.com/catalogbot/catalogbot/checks/smoke"
)

// testStartup measures how long the CatalogSource of a large catalog takes to serve in the lane's
// cluster: the catalog image as catalogbot builds it (opm builds its serve cache at pod start), and the
// same image with a serve cache pre-built by the lane's opm (`opm serve --cache-only`, as opm's
// Dockerfile does) and opm's own command, which refuses to start on an invalid cache. One package of the
// catalog is then installed: its bundle images are on a registry the lane cannot reach, so it must fail
// with a diagnostic naming the bundle and its unpullable image.
func testStartup(ctx context.Context, t *testing.T, l lane, dir string) {
	cat := loadCatalog(t, dir)
	pkg := ""
	for _, b := range cat.Bundles {
		if b.Image != "" && (pkg == "" || b.Package < pkg) {
			pkg = b.Package
		}
	}
	plan := smoke.PlanChange(nil, cat, []string{pkg}, nil)
	opmRef := serveOPM(t, l.OPMLayout)
	tmp := t.TempDir()
	plain, err := build.Image(ctx, dir, build.Options{Base: opmRef, NameOptions: []name.Option{name.Insecure}})
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(tmp, "cache")
	start := time.Now()
	if out, err := exec.CommandContext(ctx, l.OPMBinary, "serve", dir, "--cache-dir", cacheDir, "--cache-only").CombinedOutput(); err != nil {
		t.Fatalf("opm serve --cache-only: %v\n%s", err, out)
	}
	t.Logf("pre-building the serve cache took %s here", time.Since(start).Round(100*time.Millisecond))
	withCache, err := cacheImage(plain, cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []struct {
		name string
		img  build.Result
	}{{"no-cache", plain}, {"prebuilt-cache", withCache}} {
		dig, err := v.img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		repo := "catalogbot.local/smoke/startup-" + v.name
		archive := filepath.Join(tmp, v.name+".tar")
		if err := build.WriteLayoutArchive(ctx, v.img, archive, repo+":v1"); err != nil {
			t.Fatal(err)
		}
		res, err := smoke.Run(ctx, smoke.Options{ClusterName: clusterE2E, CatalogImage: repo + "@" + dig.String(), CatalogArchive: archive,
			Packages: plan.Packages, Expect: plan.Expect, BundleImages: plan.BundleImages, Timeout: 5 * time.Minute, Progress: os.Stderr})
		for _, s := range res.Steps {
			t.Logf("%s %s: %s took %.1fs (ok %t)", filepath.Base(dir), v.name, s.Step, s.Seconds, s.OK)
		}
		i := slices.IndexFunc(res.Steps, func(s smoke.StepTiming) bool { return s.Step == "catalog source" })
		if i < 0 || !res.Steps[i].OK {
			t.Errorf("%s: the CatalogSource never served: %v", v.name, err)
			continue
		}
		by := byPackage(res)
		p := by[pkg]
		if p.Succeeded || len(p.Diagnostics) == 0 || p.Diagnostics[0].Rule != "bundle-image-unpullable" || p.Diagnostics[0].Bundle != plan.Expect[pkg] {
			t.Errorf("%s: package %s: %+v; want bundle-image-unpullable naming %s", v.name, pkg, p, plan.Expect[pkg])
		}
	}
}

// cacheImage is img with the serve cache of dir at /tmp/cache (owned by the uid OLM runs catalog pods as)
// and opm's own command, which enforces the cache's integrity.
func cacheImage(img build.Result, dir string) (build.Result, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	for _, d := range []string{"tmp/", "tmp/cache/"} {
		mode := int64(0o775)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch, Uid: 1001}); err != nil {
			return build.Result{}, err
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		n := "tmp/cache/" + filepath.ToSlash(rel)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: n + "/", Mode: 0o775, ModTime: epoch, Uid: 1001})
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: 0o664, Size: int64(len(data)), ModTime: epoch, Uid: 1001}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return build.Result{}, err
	}
	if err := tw.Close(); err != nil {
		return build.Result{}, err
	}
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return build.Result{}, err
	}
	out, err := mutate.AppendLayers(img.Image, layer)
	if err != nil {
		return build.Result{}, err
	}
	cf, err := out.ConfigFile()
	if err != nil {
		return build.Result{}, err
	}
	cf = cf.DeepCopy()
	cf.Config.Cmd = slices.Clone(build.OpmCmd)
	if out, err = mutate.ConfigFile(out, cf); err != nil {
		return build.Result{}, err
	}
	return build.Result{Image: out}, nil
}
