package template

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestErrorLines checks that refusals name the template line they are about.
func TestErrorLines(t *testing.T) {
	reg := newRegistry(t, "etcd/0.9.4", "cockroachdb/5.0.4")
	src := source(t)
	cases := []struct {
		name string
		text string
		line int
	}{
		{"unknown schema", "# c\nschema: olm.fancy\n", 2},
		{"semver unknown field", "schema: olm.semver\nstable: {bundles: []}\navoidSkipPatch: true\n", 3},
		{"basic bundle with package", "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: etcd\n- schema: olm.bundle\n  package: etcd\n  image: x\n", 7},
		{"basic entry without schema", "schema: olm.template.basic\nentries:\n- {schema: olm.package, name: a}\n- name: etcd\n", 4},
		{"semver second package", "schema: olm.semver\nstable:\n  bundles:\n  - image: {digest:etcd/0.9.4}\n  - image:\n      {digest:cockroachdb/5.0.4}\n", 6},
		{"semver missing image", "schema: olm.semver\ncandidate:\n  bundles:\n  - image: {digest:etcd/0.9.4}\nfast:\n  bundles:\n  - image: {host}/nowhere/bundle:v1\n", 7},
		{"basic missing image", "schema: olm.template.basic\nentries:\n- schema: olm.bundle\n  image: {host}/nowhere/bundle@sha256:0000000000000000000000000000000000000000000000000000000000000000\n", 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := strings.ReplaceAll(c.text, "{host}", reg.Host)
			_, err := Render(context.Background(), templateCase{text: text}.render(reg), "operators/x/catalog-templates/t.yaml", src, Options{})
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("want a template error, got %v", err)
			}
			if te.Line != c.line {
				t.Errorf("line %d, want %d: %v", te.Line, c.line, err)
			}
			if !strings.HasPrefix(err.Error(), "operators/x/catalog-templates/t.yaml:") {
				t.Errorf("error does not start with the file: %v", err)
			}
		})
	}
}

// TestUnreachableImageNamesLine stops the registry: a bundle neither cached nor reachable is an error on
// its template line that names the image.
func TestUnreachableImageNamesLine(t *testing.T) {
	// Nothing listens on port 1 of loopback.
	img := "127.0.0.1:1/gone/bundle@sha256:1111111111111111111111111111111111111111111111111111111111111111"
	text := "schema: olm.semver\nstable:\n  bundles:\n  - image: " + img + "\n"
	for _, offline := range []bool{false, true} {
		src := source(t)
		src.Offline = offline
		_, err := Render(context.Background(), []byte(text), "t.yaml", src, Options{})
		var te *Error
		if !errors.As(err, &te) || te.Line != 4 || !strings.Contains(err.Error(), img) {
			t.Errorf("offline=%v: want an error on line 4 naming the image, got %v", offline, err)
		}
		if offline && !errors.Is(err, ErrNotCached) {
			t.Errorf("offline error is not ErrNotCached: %v", err)
		}
	}
}
