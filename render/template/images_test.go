package template

import (
	"slices"
	"testing"
)

// TestBundleImages: the images a template names, as its render reads them; other entries name none.
func TestBundleImages(t *testing.T) {
	tests := []struct {
		name, data string
		want       []string
	}{{
		name: "basic",
		data: "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n- schema: olm.channel\n  package: a\n  name: alpha\n  entries:\n  - name: a.v1.0.0\n- schema: olm.bundle\n  image: quay.io/p/a:1.0.0\n- image: quay.io/p/a@sha256:0123456789012345678901234567890123456789012345678901234567890123\n  schema: olm.bundle\n",
		want: []string{"quay.io/p/a:1.0.0", "quay.io/p/a@sha256:0123456789012345678901234567890123456789012345678901234567890123"},
	}, {
		name: "semver, an image in two channels once",
		data: "schema: olm.semver\nStable:\n  Bundles:\n  - Image: quay.io/p/a:1.0.0\nCandidate:\n  Bundles:\n  - Image: quay.io/p/a:1.1.0\n  - Image: quay.io/p/a:1.0.0\n",
		want: []string{"quay.io/p/a:1.1.0", "quay.io/p/a:1.0.0"},
	}, {
		name: "substitutes",
		data: "schema: olm.template.substitutes\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := BundleImages([]byte(tc.data))
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := BundleImages([]byte("schema: olm.semver\nStable: [1]\n")); err == nil {
		t.Error("a semver template that does not decode: no error")
	}
}
