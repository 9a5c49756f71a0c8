package build

import (
	"errors"
	"net/http"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// noNetwork fails every request: a scratch build makes none (issue 14: build --base scratch went to
// Docker Hub for an image named scratch).
type noNetwork struct{ t *testing.T }

func (n noNetwork) RoundTrip(r *http.Request) (*http.Response, error) {
	n.t.Errorf("scratch build made a request: %s %s", r.Method, r.URL)
	return nil, errors.New("no network")
}

func TestImageOnScratch(t *testing.T) {
	dir, _ := fbcDir(t)
	opts := testOptions(Scratch)
	opts.Transport = noNetwork{t}
	res, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Image == nil || res.Index != nil {
		t.Fatalf("result %+v: want a single image", res)
	}
	layers, err := res.Image.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d (%v), want the catalog layer alone", len(layers), err)
	}
	cfg, err := res.Image.ConfigFile()
	if err != nil || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Fatalf("config %+v (%v), want linux/amd64", cfg, err)
	}

	opts.Platforms = []v1.Platform{linuxAMD64, linuxARM64}
	res, err = Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Index == nil || len(res.Platforms) != 2 {
		t.Fatalf("result %+v: want an index of 2 platforms", res)
	}
	again, err := Image(t.Context(), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := res.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Errorf("scratch builds differ: %s, %s", d1, d2)
	}
}
