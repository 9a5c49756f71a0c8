package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A catalog's image and catalogs.tags take the Kubernetes placeholders: from the catalog's name (v4.Y
// runs 1.(Y+13)) or list[].kubernetes; the first tag named by them alone is what a cluster follows.
func TestCatalogImageKubernetesTags(t *testing.T) {
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  pattern: catalogs/{version}
  image: quay.io/example/index:{version}
  versions: [v4.16, v4.17]
  tags: ["v{kube_major_version}.{kube_minor_version}", "ocp-{version}"]
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	cats, err := cfg.ResolveCatalogs("")
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 2 || cats[0].Image != "quay.io/example/index:v4.16" ||
		!slices.Equal(cats[0].Tags, []string{"quay.io/example/index:v1.29", "quay.io/example/index:ocp-v4.16"}) ||
		!slices.Equal(cats[1].Tags, []string{"quay.io/example/index:v1.30", "quay.io/example/index:ocp-v4.17"}) ||
		cats[1].FollowImage != "quay.io/example/index:v{kube_major_version}.{kube_minor_version}" {
		t.Fatalf("catalogs %+v", cats)
	}

	cfg, ds, err = ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  list:
  - {name: edge, dir: catalogs/edge, image: "quay.io/e/index:v{kube_major_version}.{kube_minor_version}.{kube_patch_version}", kubernetes: "1.33.2"}
  - {name: v4.16, dir: catalogs/v4.16, image: "quay.io/e/index:v{kube_major_version}.{kube_minor_version}", openshift: "4.16"}
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	if cats, err = cfg.ResolveCatalogs(""); err != nil {
		t.Fatal(err)
	}
	if cats[0].Image != "quay.io/e/index:v1.33.2" || cats[0].Kubernetes != "1.33.2" || cats[1].Image != "quay.io/e/index:v1.29" ||
		cats[1].FollowImage != "quay.io/e/index:v{kube_major_version}.{kube_minor_version}" {
		t.Fatalf("catalogs %+v", cats)
	}
}

// A placeholder without a known Kubernetes version, an unknown placeholder, a tag that is not a tag:
// each an error on the line that writes it, with a hint.
func TestCatalogImageTemplatesRefused(t *testing.T) {
	cases := []struct {
		name, text string
		line       int
		msg        string
	}{
		{"unknown placeholder in the image", "catalogs:\n  pattern: c/{version}\n  image: quay.io/e/i:{kube_version}\n", 5, "unknown placeholder {kube_version}"},
		{"unknown placeholder in a tag", "catalogs:\n  pattern: c/{version}\n  image: quay.io/e/i:{version}\n  tags: [\"{ocp}\"]\n", 6, "unknown placeholder {ocp}"},
		{"a version that is not v4.Y", "catalogs:\n  pattern: c/{version}\n  image: quay.io/e/i:{version}\n  versions: [v4.16, edge]\n  tags: [\"v{kube_major_version}.{kube_minor_version}\"]\n", 7, `catalog "edge" (catalogs.versions[1]) has no known Kubernetes version`},
		{"a patch a name does not give", "catalogs:\n  pattern: c/{version}\n  image: \"quay.io/e/i:v{kube_major_version}.{kube_minor_version}.{kube_patch_version}\"\n  versions: [v4.16]\n", 5, "has no patch number"},
		{"a list entry without Kubernetes", "catalogs:\n  list:\n  - {name: edge, dir: e, image: \"quay.io/e/i:v{kube_minor_version}\"}\n", 5, `catalog "edge" (catalogs.list[0]) has no known Kubernetes version`},
		{"a tag that is a reference", "catalogs:\n  pattern: c/{version}\n  image: quay.io/e/i:{version}\n  tags: [\"quay.io/e/i:v{kube_minor_version}\"]\n", 6, "is not an image tag"},
		{"tags without an image", "catalogs:\n  pattern: c/{version}\n  tags: [latest]\n", 5, "set without an image"},
		{"publish.image", "publish:\n  image: \"quay.io/e/i:v{kube_major_version}.{kube_minor_version}\"\n", 4, "a single catalog has no version nor Kubernetes version"},
		{"a bad kubernetes", "catalogs:\n  list:\n  - {name: a, dir: a, kubernetes: \"1.29.x\"}\n", 5, "not a Kubernetes 1.Y or 1.Y.Z version"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+tt.text))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, d := range ds {
				if strings.Contains(d.Message, tt.msg) {
					if d.Line != tt.line || d.File != ".catalogbot.yaml" || d.Hint == "" {
						t.Errorf("at %s:%d, hint %q; want line %d with a hint", d.File, d.Line, d.Hint, tt.line)
					}
					return
				}
			}
			t.Errorf("no diagnostic says %q: %v", tt.msg, ds)
		})
	}
}

// Resolving the directories of a versions-less pattern finds what the configuration could not check:
// a catalog without a Kubernetes version, two catalogs pushed as one tag.
func TestCatalogImagesRefusedWhenResolved(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"c/v4.16", "c/edge"} {
		mkdir(t, root, d)
	}
	cfg, ds, err := ParseConfig(".catalogbot.yaml", []byte(header+"catalogs:\n  pattern: c/{version}\n  image: \"quay.io/e/i:v{kube_major_version}.{kube_minor_version}\"\n"))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	if _, err := cfg.ResolveCatalogs(root); err == nil || !strings.Contains(err.Error(), `catalog "edge" has no known Kubernetes version`) {
		t.Fatalf("resolved: %v", err)
	}
	cfg, ds, err = ParseConfig(".catalogbot.yaml", []byte(header+`catalogs:
  list:
  - {name: a, dir: a, image: "quay.io/e/i:v{kube_minor_version}", kubernetes: "1.29"}
  - {name: b, dir: b, image: "quay.io/e/i:v{kube_minor_version}", openshift: "4.16"}
`))
	if err != nil {
		t.Fatalf("%v %v", err, ds)
	}
	if _, err := cfg.ResolveCatalogs(""); err == nil || !strings.Contains(err.Error(), "catalogs a and b are both pushed as quay.io/e/i:v29") {
		t.Fatalf("resolved: %v", err)
	}
}

func mkdir(t *testing.T, root, dir string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(dir)), 0o755); err != nil {
		t.Fatal(err)
	}
}
