// Command imagesbench compares `catalogbot check-images` with a sequential `crane digest` loop (one
// process per image, as a shell script would do it) on the same N images in the same local registry, in
// one run, and prints the ratio. Run it through bench/check-images.sh.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/registrytest"
)

func main() {
	n := flag.Int("n", 500, "number of images")
	catalogbot := flag.String("catalogbot", "", "catalogbot binary")
	crane := flag.String("crane", "", "crane binary")
	flag.Parse()
	ctx := context.Background()
	reg, stop, err := registrytest.Serve(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	dir, err := os.MkdirTemp("", "imagesbench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	img, err := random.Image(256, 1)
	if err != nil {
		log.Fatal(err)
	}
	refs := make([]string, *n)
	f, err := os.Create(filepath.Join(dir, "catalog.json"))
	if err != nil {
		log.Fatal(err)
	}
	enc := json.NewEncoder(f)
	must(enc.Encode(map[string]any{"schema": "olm.package", "name": "bench", "defaultChannel": "stable"}))
	var entries []map[string]string
	for i := range *n {
		refs[i] = fmt.Sprintf("%s/bench/op%d-bundle:v1.0.%d", reg.Host, i%50, i)
		tag, err := name.NewTag(refs[i], name.Insecure)
		if err != nil {
			log.Fatal(err)
		}
		if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
			log.Fatal(err)
		}
		e := map[string]string{"name": fmt.Sprintf("bench.v1.0.%d", i)}
		if i > 0 {
			e["replaces"] = fmt.Sprintf("bench.v1.0.%d", i-1)
		}
		entries = append(entries, e)
	}
	must(enc.Encode(map[string]any{"schema": "olm.channel", "name": "stable", "package": "bench", "entries": entries}))
	for i, ref := range refs {
		must(enc.Encode(map[string]any{"schema": "olm.bundle", "name": fmt.Sprintf("bench.v1.0.%d", i), "package": "bench", "image": ref,
			"properties": []any{map[string]any{"type": "olm.package", "value": map[string]string{"packageName": "bench", "version": fmt.Sprintf("1.0.%d", i)}}}}))
	}
	must(f.Close())

	start := time.Now()
	if out, err := exec.Command(*catalogbot, "check-images", dir).CombinedOutput(); err != nil {
		log.Fatalf("catalogbot check-images: %v\n%s", err, out)
	}
	cb := time.Since(start)
	start = time.Now()
	for _, ref := range refs {
		if out, err := exec.Command(*crane, "digest", "--insecure", ref).CombinedOutput(); err != nil {
			log.Fatalf("crane digest %s: %v\n%s", ref, err, out)
		}
	}
	cr := time.Since(start)
	fmt.Printf("%d images in a local registry\n", *n)
	fmt.Printf("sequential crane digest loop:  %8.3f s\n", cr.Seconds())
	fmt.Printf("catalogbot check-images:       %8.3f s\n", cb.Seconds())
	fmt.Printf("speed-up: %.1fx\n", cr.Seconds()/cb.Seconds())
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
