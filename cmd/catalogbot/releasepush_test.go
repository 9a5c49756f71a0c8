package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/filetree"
	"github.com/catalogbot/catalogbot/internal/registrytest"
)

const (
	releaseBundleDir  = "operators/openstack-lightspeed-operator/0.0.2"
	releaseTemplate   = "operators/openstack-lightspeed-operator/catalog-templates/v4.16.yaml"
	releaseImagePath  = "/pipeline/openstack-lightspeed-operator:0.0.2"
	releasePushTimout = "2s"
)

// release --push builds the bundle image from the directory and pushes it by digest, then its tag; the
// template names the tag only after the tag is pushed.
func TestReleasePushPushesBeforeTheTemplatesNameIt(t *testing.T) {
	root, _ := releaseRepo(t)
	var (
		mu          sync.Mutex
		namedAtPush []bool
	)
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
				tpl, err := os.ReadFile(filepath.Join(root, releaseTemplate))
				mu.Lock()
				namedAtPush = append(namedAtPush, err != nil || bytes.Contains(tpl, []byte(releaseImagePath)))
				mu.Unlock()
			}
			h.ServeHTTP(w, r)
		})
	})
	image := reg.Host + releaseImagePath
	var stdout, stderr bytes.Buffer
	args := []string{"release", releaseBundleDir, "--repo", root, "--templates-only", "--push", "--bundle-image", reg.Host + "/pipeline/{package}:{version}"}
	if code := run(t.Context(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if len(namedAtPush) != 2 || namedAtPush[0] || namedAtPush[1] {
		t.Errorf("manifest PUTs %d, the template naming the image at each: %v (want 2 PUTs, by digest then tag, before the template names it)", len(namedAtPush), namedAtPush)
	}
	tpl, err := os.ReadFile(filepath.Join(root, releaseTemplate))
	if err != nil || !strings.Contains(string(tpl), "image: "+image+"\n") {
		t.Errorf("the template does not name %s by its tag (%v):\n%s", image, err, tpl)
	}
	img, err := bundleimage.Build(t.Context(), filepath.Join(root, releaseBundleDir))
	if err != nil {
		t.Fatal(err)
	}
	want, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref)
	if err != nil || desc.Digest != want {
		t.Errorf("the registry's %s is %v (%v), want the bundle image %s", image, desc, err, want)
	}
	if !strings.Contains(stdout.String(), "(pushed "+reg.Host+"/pipeline/openstack-lightspeed-operator@"+want.String()+")") {
		t.Errorf("the report does not name the pushed digest:\n%s", stdout.String())
	}
}

// A registry that fails (503 after the retries) or never answers stops the release within --push-timeout
// with an infrastructure error naming the image (exit 3), and nothing is written.
func TestReleasePushRegistryFailureWritesNothing(t *testing.T) {
	for name, status := range map[string]int{"503": http.StatusServiceUnavailable, "never answers": 0} {
		t.Run(name, func(t *testing.T) {
			root, _ := releaseRepo(t)
			done := make(chan struct{})
			reg := registrytest.New(t, func(http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if status == 0 {
						select {
						case <-done:
						case <-r.Context().Done():
						}
						return
					}
					w.WriteHeader(status)
				})
			})
			defer close(done)
			before, err := filetree.Read(root)
			if err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			args := []string{"release", releaseBundleDir, "--repo", root, "--push", "--push-timeout", releasePushTimout,
				"--bundle-image", reg.Host + "/pipeline/{package}:{version}"}
			if code := run(t.Context(), args, &stdout, &stderr); code != 3 {
				t.Fatalf("exit %d, want 3\n%s\n%s", code, stdout.String(), stderr.String())
			}
			if msg := stderr.String(); !strings.Contains(msg, "nothing was written: pushing bundle image "+reg.Host+releaseImagePath+": ") {
				t.Errorf("the error does not name the image:\n%s", msg)
			}
			after, err := filetree.Read(root)
			if err != nil {
				t.Fatal(err)
			}
			if d := filetree.Diff(before, after); len(d) > 0 {
				t.Errorf("a failed push wrote %v", d)
			}
		})
	}
}

// A bundle directory that is a symbolic link (to another package's bundle directory) is refused before
// anything is pushed or written: the image is built from real directories of the repository only, never
// from what a link names.
func TestReleasePushRefusesALinkedBundleDirectory(t *testing.T) {
	root, _ := releaseRepo(t)
	impostor := filepath.Join(root, "operators", "impostor", "0.0.2")
	if err := os.MkdirAll(filepath.Dir(impostor), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(root, releaseBundleDir), impostor); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../impostor/0.0.2", filepath.Join(root, releaseBundleDir)); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		requests int
	)
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			requests++
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	})
	before, err := filetree.Read(filepath.Join(root, "operators", "openstack-lightspeed-operator", "catalog-templates"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	args := []string{"release", releaseBundleDir, "--repo", root, "--templates-only", "--push", "--bundle-image", reg.Host + "/pipeline/{package}:{version}"}
	if code := run(t.Context(), args, &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), releaseBundleDir+" is a symbolic link") {
		t.Errorf("the error does not name the link:\n%s", stderr.String())
	}
	if requests > 0 {
		t.Errorf("the registry got %d requests", requests)
	}
	after, err := filetree.Read(filepath.Join(root, "operators", "openstack-lightspeed-operator", "catalog-templates"))
	if err != nil {
		t.Fatal(err)
	}
	if d := filetree.Diff(before, after); len(d) > 0 {
		t.Errorf("a refused release wrote %v", d)
	}
}
