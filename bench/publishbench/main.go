// Command publishbench measures what a republish uploads: it publishes a catalog to a local registry,
// changes one package, publishes again, and compares the bytes uploaded the second time with the size of
// the new catalog layer. Run it through bench/publish.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/build"
)

type counter struct {
	next     http.Handler
	uploaded atomic.Int64
}

func (c *counter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if (r.Method == http.MethodPatch || r.Method == http.MethodPut || r.Method == http.MethodPost) && r.Body != nil {
		r.Body = countingBody{r.Body, &c.uploaded}
	}
	c.next.ServeHTTP(w, r)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

func main() {
	catalog := flag.String("catalog", "", "catalog directory to publish")
	flag.Parse()
	ctx := context.Background()
	c := &counter{next: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(c)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	// a two-platform base with 5 MB of layers per platform
	var base v1.ImageIndex = mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(1<<20, 5)
		must(err)
		base = mutate.AppendManifests(base, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	baseRef, _ := name.NewTag(host+"/bench/opm:v1", name.Insecure)
	must(remote.WriteIndex(baseRef, base, remote.WithContext(ctx)))

	work, err := os.MkdirTemp("", "publishbench-")
	must(err)
	defer os.RemoveAll(work)
	dir := filepath.Join(work, "catalog")
	must(exec.Command("cp", "-r", *catalog, dir).Run())
	must(exec.Command("chmod", "-R", "u+w", dir).Run())
	opts := build.Options{Base: baseRef.String(), NameOptions: []name.Option{name.Insecure}, Epoch: time.Unix(0, 0)}
	target, _ := name.NewTag(host+"/bench/catalog:latest", name.Insecure)

	publish := func() (int64, int64) {
		before := c.uploaded.Load()
		res, err := build.Image(ctx, dir, opts)
		must(err)
		_, err = build.Push(ctx, res, target, opts)
		must(err)
		size, err := res.Layer.Size()
		must(err)
		return c.uploaded.Load() - before, size
	}
	first, layer1 := publish()
	entries, err := os.ReadDir(dir)
	must(err)
	pkg := entries[0].Name()
	files, err := os.ReadDir(filepath.Join(dir, pkg))
	must(err)
	f, err := os.OpenFile(filepath.Join(dir, pkg, files[0].Name()), os.O_APPEND|os.O_WRONLY, 0)
	must(err)
	_, err = f.WriteString("\n")
	must(err)
	must(f.Close())
	second, layer2 := publish()
	fmt.Printf("catalog %s, base: 2 platforms x 5 MiB of layers\n", *catalog)
	fmt.Printf("first publish uploaded:        %10d bytes (catalog layer %d bytes)\n", first, layer1)
	fmt.Printf("after changing package %s: %d bytes uploaded; new catalog layer %d bytes; overhead %d bytes (configs, manifests)\n",
		pkg, second, layer2, second-layer2)
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
