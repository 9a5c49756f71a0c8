package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/internal/registrytest"
)

// catalogbot publish --kubernetes 1.29 --tag 'v{kube_major_version}.{kube_minor_version}' pushes the
// catalog under IMAGE and v1.29 (one digest) and prints the CatalogSource that follows the tag; a
// placeholder it cannot fill is a usage error.
func TestPublishKubernetesTag(t *testing.T) {
	reg := registrytest.New(t, nil)
	base := registrytest.PushBase(t, reg.Host)
	dir := writeCatalog(t, map[string]string{"foo/catalog.json": catalogFile("quay.io/example/foo-bundle@" + digest)})
	image := reg.Host + "/ops/index:v4.16"
	follow := "v{kube_major_version}.{kube_minor_version}"
	var stdout, stderr bytes.Buffer
	if code := run(t.Context(), []string{"publish", "--base", base, "--kubernetes", "1.29", "--tag", follow, "-o", "markdown", dir, image}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	a, b := headDigest(t, image), headDigest(t, reg.Host+"/ops/index:v1.29")
	if a != b {
		t.Errorf("v4.16 is %s, v1.29 is %s: want one image", a, b)
	}
	for _, want := range []string{`olm.catalogImageTemplate: "` + reg.Host + `/ops/index:` + follow + `"`, "image: " + reg.Host + "/ops/index:v1.29"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("the report does not print %q:\n%s", want, stdout.String())
		}
	}
	for _, args := range [][]string{
		{"publish", "--base", base, "--tag", follow, dir, image},                                    // no Kubernetes version
		{"publish", "--base", base, "--kubernetes", "1.29", "--tag", "v{kube}", dir, image},         // unknown placeholder
		{"publish", "--base", base, "--kubernetes", "1.29", "--tag", "a/b:c", dir, image},           // not a tag
		{"publish", "--base", base, "--kubernetes", "1.29", dir, reg.Host + "/ops/index:{version}"}, // no catalog name
	} {
		stdout.Reset()
		stderr.Reset()
		if code := run(t.Context(), args, &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, stderr.String())
		}
	}
}

func mustRef(t *testing.T, s string) name.Reference {
	t.Helper()
	ref, err := name.ParseReference(s, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func headDigest(t *testing.T, ref string) string {
	t.Helper()
	desc, err := remote.Head(mustRef(t, ref))
	if err != nil {
		t.Fatalf("%s: %v", ref, err)
	}
	return desc.Digest.String()
}
