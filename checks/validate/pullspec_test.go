package validate

import (
	"context"
	"testing"

	"go.podman.io/image/v5/docker/reference"

	"github.com/catalogbot/catalogbot/catalog"
)

var pullSpecSeeds = []string{
	"quay.io/org/repo:v1.0.0", "quay.io/org/repo@sha256:" + hex64, "quay.io/org/repo:v1@sha256:" + hex64,
	"localhost/a", "localhost:5000/a/b_c__d.e-f--g:tag", "127.0.0.1:5000/x", "Quay.io/org/repo", "quay.io/Org/repo",
	"quay.io/org/repo:", "quay.io/org/repo:.x", "quay.io/org/repo@sha256:ABC", "busybox", "library/busybox",
	"quay.io/org/_repo", "quay.io/org/repo_", "quay.io/org/re___po", "quay.io/org/re..po", "quay.io//repo",
	"-quay.io/org/repo", "quay-.io/repo", "quay.io:/repo", "[::1]:5000/repo", "quay.io/org/repo@sha512:" + hex64 + hex64,
}

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// The fast path may only accept what the library accepts.
func checkFastPath(t *testing.T, ref string) {
	t.Helper()
	if plainReference(ref) {
		if _, err := reference.ParseNormalizedNamed(ref); err != nil {
			t.Errorf("fast path accepts %q, the library rejects it: %v", ref, err)
		}
	}
}

func TestPullSpecFastPathSeeds(t *testing.T) {
	for _, ref := range pullSpecSeeds {
		checkFastPath(t, ref)
	}
	if !plainReference("quay.io/org/repo@sha256:"+hex64) || !plainReference("localhost:5000/a/b_c__d.e-f--g:tag") {
		t.Error("the common shapes must take the fast path")
	}
}

// Every image of the real catalogs: same verdict, and most take the fast path.
func TestPullSpecFastPathRealImages(t *testing.T) {
	res, err := catalog.LoadDir(context.Background(), sharedData(t, "catalogs", "composed-279"), catalog.LoadOptions{Lean: true})
	if err != nil {
		t.Fatal(err)
	}
	fast, total := 0, 0
	for _, b := range res.Catalog.Bundles {
		refs := []string{b.Image}
		for _, ri := range b.RelatedImages {
			refs = append(refs, ri.Image)
		}
		for _, ref := range refs {
			if ref == "" {
				continue
			}
			total++
			checkFastPath(t, ref)
			if plainReference(ref) {
				fast++
			}
		}
	}
	t.Logf("%d of %d image references took the fast path", fast, total)
	if fast*10 < total*9 {
		t.Errorf("only %d of %d references took the fast path", fast, total)
	}
}

func FuzzPullSpecFastPath(f *testing.F) {
	for _, s := range pullSpecSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) { checkFastPath(t, ref) })
}
