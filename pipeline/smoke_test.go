package pipeline

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/config"
	"github.com/catalogbot/catalogbot/diag"
)

func bundleWithKube(pkg, min string) *catalog.Bundle {
	return &catalog.Bundle{Package: pkg, Parsed: &catalog.Parsed{CSVMetadata: &catalog.CSVMetadata{MinKubeVersion: min}}}
}

func TestNodeImageForMinKubeVersion(t *testing.T) {
	c := &catalog.Catalog{Bundles: []*catalog.Bundle{bundleWithKube("a", "1.27.0"), bundleWithKube("a", "v1.31.2"), bundleWithKube("b", "1.40.0")}}
	images := map[string]string{"v1.30.0": "node:v1.30", "v1.33.13": "node:v1.33", "1.35.1": "node:v1.35"}
	if got := minKubeVersion(c, []string{"a"}); got != "v1.31.2" {
		t.Fatalf("minKubeVersion = %q", got)
	}
	for _, tc := range []struct{ min, want string }{{"", "node:v1.30"}, {"1.27.0", "node:v1.30"}, {"v1.31.2", "node:v1.33"}, {"1.35.1", "node:v1.35"}} {
		if got, err := nodeImageFor(images, tc.min); err != nil || got != tc.want {
			t.Errorf("nodeImageFor(%q) = %q, %v; want %q", tc.min, got, err, tc.want)
		}
	}
	if _, err := nodeImageFor(images, minKubeVersion(c, []string{"b"})); err == nil {
		t.Error("no node image is new enough for 1.40.0: want an error")
	}
	if _, err := nodeImageFor(map[string]string{"latest": "x"}, ""); err == nil {
		t.Error("a key that is not a version must be refused")
	}
}

// Smoke slots: a run takes a free slot at once, waits (saying so) while every slot is held, and a run
// whose context ends while waiting gets an error naming the wait, holding nothing.
func TestSmokeSlots(t *testing.T) {
	in := &SmokeInput{Slots: make(chan struct{}, 1)}
	var lines []string
	say := func(l string) { lines = append(lines, l) }
	release, err := in.acquire(context.Background(), say)
	if err != nil || len(lines) != 0 {
		t.Fatalf("free slot: err %v, lines %q", err, lines)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := in.acquire(ctx, say); err == nil || !strings.Contains(err.Error(), "waiting for a smoke cluster slot") {
		t.Fatalf("all slots held, context cancelled: err %v", err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "waiting for another check's smoke install") {
		t.Errorf("lines %q", lines)
	}
	release()
	if len(in.Slots) != 0 {
		t.Fatal("release did not free the slot")
	}
	if r2, err := in.acquire(context.Background(), say); err != nil {
		t.Fatalf("after release: %v", err)
	} else {
		r2()
	}
	if _, err := (&SmokeInput{}).acquire(context.Background(), say); err != nil {
		t.Fatalf("no slots configured: %v", err)
	}
}

// smokeNodeImage: a catalog with a cluster version gets the newest patch of its Kubernetes minor among
// the node images by version and the single node image whose tag names its version; none is a usage
// error naming the catalog; a catalog without a cluster version is chosen for as a single catalog is.
func TestSmokeNodeImageForCatalog(t *testing.T) {
	in := &SmokeInput{NodeImage: "kindest/node:v1.33.20@sha256:0123", NodeImages: map[string]string{
		"1.33": "node:133", "v1.33.13": "node:13313", "v1.30.1": "node:130", "1.29": "node:129"}}
	head := &catalog.Catalog{Bundles: []*catalog.Bundle{bundleWithKube("a", "1.30.0")}}
	for _, tc := range []struct {
		cat  config.Catalog
		want string
	}{
		{config.Catalog{Name: "v4.20", OpenShift: "4.20", Kubernetes: "1.33"}, "kindest/node:v1.33.20@sha256:0123"},
		{config.Catalog{Name: "v4.17", OpenShift: "4.17", Kubernetes: "1.30"}, "node:130"},
		{config.Catalog{Name: "v4.16", OpenShift: "4.16", Kubernetes: "1.29"}, "node:129"},
		// no cluster version: --smoke-node-image, as for one catalog
		{config.Catalog{Name: "edge"}, "kindest/node:v1.33.20@sha256:0123"},
	} {
		if got, err := smokeNodeImage(in, tc.cat, head, []string{"a"}); err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.cat.Name, got, err, tc.want)
		}
	}
	// without --smoke-node-image: the oldest satisfying minKubeVersion
	noSingle := &SmokeInput{NodeImages: in.NodeImages}
	if got, err := smokeNodeImage(noSingle, config.Catalog{Name: "edge"}, head, []string{"a"}); err != nil || got != "node:130" {
		t.Errorf("edge without a single node image: %q, %v", got, err)
	}
	if got, err := smokeNodeImage(noSingle, config.Catalog{Name: "v4.20", OpenShift: "4.20", Kubernetes: "1.33"}, head, nil); err != nil || got != "node:13313" {
		t.Errorf("newest patch of 1.33: %q, %v", got, err)
	}
	_, err := smokeNodeImage(in, config.Catalog{Name: "v4.22", OpenShift: "4.22", Kubernetes: "1.35"}, head, nil)
	if diag.CategoryOf(err) != diag.Usage || !strings.Contains(fmt.Sprint(err), "catalog v4.22 (OpenShift 4.22, Kubernetes 1.35) has no kind node image") {
		t.Errorf("missing 1.35: %v", err)
	}
	if _, ok := nodeImageVersion("example.test:5000/node"); ok {
		t.Error("a registry port is not a version tag")
	}
}
