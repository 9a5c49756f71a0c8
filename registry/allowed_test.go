package registry

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
)

// Hosts and host/namespace prefixes (upstream's allowed_bundle_registries); a prefix holds only on a path
// boundary, so a look-alike namespace is refused.
func TestAllowList(t *testing.T) {
	a, err := CompileAllowList([]string{"registry.example.com:5000", "quay.io/community-operator-pipeline-prod/", "docker.io/Library"})
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]bool{
		"registry.example.com:5000/any/thing:v1":                       true,
		"quay.io/community-operator-pipeline-prod/etcd:0.9.4":          true,
		"QUAY.IO/community-operator-pipeline-prod/a/b@sha256:" + zeros: true,
		"quay.io/community-operator-pipeline-prod-evil/etcd:0.9.4":     false,
		"quay.io/community-operator-pipeline:1":                        false,
		"quay.io/other/etcd:1":                                         false,
		"busybox:1":                                                    true, // docker.io/library/busybox
		"docker.io/someone/busybox:1":                                  false,
		"registry.example.com/any/thing:v1":                            false, // another port is another registry
	} {
		ref, err := name.ParseReference(image)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Allows(ref.Context()); got != want {
			t.Errorf("%s: allowed %v, want %v", image, got, want)
		}
	}
	if _, err := CompileAllowList([]string{"quay.io/UPPER CASE/", "http://quay.io"}); err == nil {
		t.Error("malformed entries accepted")
	}
	if !(AllowList{}).Allows(name.MustParseReference("x.io/y:1").Context()) {
		t.Error("the empty list must allow everything")
	}
}

const zeros = "0000000000000000000000000000000000000000000000000000000000000000"

// TestAttackAllowListLookalikes: a host with a suffix added is another registry, and a blank entry (which
// go-containerregistry would read as Docker Hub) is refused, not an allowance of Docker Hub.
func TestAttackAllowListLookalikes(t *testing.T) {
	a, err := CompileAllowList([]string{"quay.io", "quay.io/ns/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, image := range []string{"quay.io.evil.com/ns/op:1", "quay.io:444/ns/op:1", "evilquay.io/ns/op:1", "busybox:1"} {
		ref, err := name.ParseReference(image)
		if err != nil {
			t.Fatal(err)
		}
		if a.Allows(ref.Context()) {
			t.Errorf("%s allowed", image)
		}
	}
	for _, blank := range []string{"", " ", "/", "/library"} {
		if _, err := CompileAllowList([]string{blank}); err == nil {
			t.Errorf("entry %q accepted", blank)
		}
	}
}
