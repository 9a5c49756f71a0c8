// Command renderbench compares `catalogbot render` with the OLM docs' sequential loop (`opm render` of
// each reference, one process per image) on the packages of a catalog served as per-package index images
// from a local registry, in one run, and prints the ratio. Run it through bench/render.sh.
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/catalogbot/catalogbot/internal/registrytest"
)

func main() {
	src := flag.String("catalog", "", "catalog directory with one directory per package")
	n := flag.Int("n", 0, "use only the first n packages (0: all)")
	catalogbot := flag.String("catalogbot", "", "catalogbot binary")
	opm := flag.String("opm", "", "opm binary")
	flag.Parse()
	ctx := context.Background()
	reg, stop, err := registrytest.Serve(ctx)
	must(err)
	defer stop()

	entries, err := os.ReadDir(*src)
	must(err)
	var pkgs []string
	for _, e := range entries {
		if e.IsDir() {
			pkgs = append(pkgs, e.Name())
		}
	}
	sort.Strings(pkgs)
	if *n > 0 && *n < len(pkgs) {
		pkgs = pkgs[:*n]
	}
	work, err := os.MkdirTemp("", "renderbench-")
	must(err)
	defer os.RemoveAll(work)
	var refs bytes.Buffer
	fmt.Fprintf(&refs, "name: catalog\nrepo: %s/bench/catalog\ntag: latest\nreferences:\n", reg.Host)
	images := map[string]string{}
	for _, p := range pkgs {
		img := indexImage(filepath.Join(*src, p), p)
		ref := fmt.Sprintf("%s/bench/%s-index:v1", reg.Host, p)
		tag, err := name.NewTag(ref, name.Insecure)
		must(err)
		must(remote.Write(tag, img, remote.WithContext(ctx)))
		images[p] = ref
		fmt.Fprintf(&refs, "- name: %s\n  image: %s\n", p, ref)
	}
	must(os.WriteFile(filepath.Join(work, "catalog.yaml"), refs.Bytes(), 0o644))

	run := func(args ...string) time.Duration {
		start := time.Now()
		cmd := exec.Command(*catalogbot, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(work, "cache"))
		if out, err := cmd.CombinedOutput(); err != nil {
			log.Fatalf("catalogbot %v: %v\n%s", args, err, out)
		}
		return time.Since(start)
	}
	cold := run("render", "--output-dir", "cb")
	warm := run("render", "--output-dir", "cb")

	// the docs' loop: opm render of each reference into <name>/<reference>/index.yaml, one at a time
	home := filepath.Join(work, "home")
	must(os.MkdirAll(filepath.Join(home, ".config", "containers"), 0o755))
	must(os.WriteFile(filepath.Join(home, ".config", "containers", "policy.json"), []byte(`{"default":[{"type":"insecureAcceptAnything"}]}`), 0o644))
	start := time.Now()
	for _, p := range pkgs {
		out := filepath.Join(work, "opm", "catalog", p)
		must(os.MkdirAll(out, 0o755))
		cmd := exec.Command(*opm, "render", "--use-http", images[p], "-o", "yaml")
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+home, "TMPDIR="+home)
		data, err := cmd.Output()
		if err != nil {
			log.Fatalf("opm render %s: %v", images[p], err)
		}
		must(os.WriteFile(filepath.Join(out, "index.yaml"), data, 0o644))
	}
	loop := time.Since(start)
	same := exec.Command("diff", "-r", filepath.Join(work, "opm", "catalog"), filepath.Join(work, "cb", "catalog")).Run() == nil
	fmt.Printf("%d packages as per-package index images in a local registry\n", len(pkgs))
	fmt.Printf("sequential opm render loop:          %8.2f s\n", loop.Seconds())
	fmt.Printf("catalogbot render (cold cache):      %8.2f s   speed-up %.1fx\n", cold.Seconds(), loop.Seconds()/cold.Seconds())
	fmt.Printf("catalogbot render (warm, by digest): %8.2f s   speed-up %.1fx\n", warm.Seconds(), loop.Seconds()/warm.Seconds())
	fmt.Printf("outputs byte-identical: %v\n", same)
}

// indexImage is a catalog image holding one package's FBC under /configs.
func indexImage(dir, pkg string) v1.Image {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(tw.WriteHeader(&tar.Header{Name: "configs/", Typeflag: tar.TypeDir, Mode: 0o755}))
	must(tw.WriteHeader(&tar.Header{Name: "configs/" + pkg + "/", Typeflag: tar.TypeDir, Mode: 0o755}))
	files, err := os.ReadDir(dir)
	must(err)
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.Name()))
		must(err)
		must(tw.WriteHeader(&tar.Header{Name: "configs/" + pkg + "/" + f.Name(), Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(data))}))
		_, err = tw.Write(data)
		must(err)
	}
	must(tw.Close())
	data := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	must(err)
	img, err := mutate.AppendLayers(empty.Image, layer)
	must(err)
	img, err = mutate.Config(img, v1.Config{Labels: map[string]string{"operators.operatorframework.io.index.configs.v1": "/configs"}})
	must(err)
	return img
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
