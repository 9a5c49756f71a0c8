package images

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// BenchmarkCheck500 checks 500 unique references (tags of one image, in 50 repositories) against the
// in-process registry: 500 manifest HEADs and 50 pings per iteration.
func BenchmarkCheck500(b *testing.B) {
	reg := registrytest.New(b, nil)
	img := image(b, "linux/amd64", "bench")
	var refs []Ref
	for r := range 50 {
		repo := fmt.Sprintf("%s/ops/op%d", reg.Host, r)
		push(b, reg.Host, fmt.Sprintf("ops/op%d:v0", r), img)
		for tag := range 10 {
			s := fmt.Sprintf("%s:v%d", repo, tag)
			if tag > 0 {
				ref, err := name.NewTag(s, name.Insecure)
				if err != nil {
					b.Fatal(err)
				}
				if err := remote.Tag(ref, img); err != nil {
					b.Fatal(err)
				}
			}
			refs = append(refs, use(s, r*10+tag+1, fmt.Sprintf("op.v%d", tag), "image"))
		}
	}
	c := testChecker(Policy{})
	for b.Loop() {
		ds, err := c.Check(context.Background(), refs)
		if err != nil || len(ds) != 0 {
			b.Fatalf("Check = %v, %v", ds, err)
		}
	}
}
