package demo

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing/fstest"
	"text/template"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// The sample operator: a registry+v1 bundle (CSV, CRD, annotations) per version.

var csvTmpl = template.Must(template.New("csv").Parse(`apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: {{.Package}}.v{{.Version}}
  annotations:
    capabilities: Basic Install
    containerImage: {{.Operator}}
spec:
  displayName: Demo Operator
  description: A small operator used by catalogbot's demo.
  version: {{.Version}}
{{- if .Replaces}}
  replaces: {{.Package}}.v{{.Replaces}}
{{- end}}
  minKubeVersion: 1.27.0
  maturity: alpha
  provider:
    name: catalogbot
  maintainers:
  - name: catalogbot
    email: catalogbot@example.com
  installModes:
  - type: OwnNamespace
    supported: true
  - type: SingleNamespace
    supported: true
  - type: MultiNamespace
    supported: false
  - type: AllNamespaces
    supported: true
  customresourcedefinitions:
    owned:
    - name: widgets.demo.catalogbot.dev
      version: v1
      kind: Widget
      displayName: Widget
      description: A widget.
  relatedImages:
  - name: operator
    image: {{.Operator}}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: demo-operator
        spec:
          replicas: 1
          selector:
            matchLabels:
              app: demo-operator
          template:
            metadata:
              labels:
                app: demo-operator
            spec:
              containers:
              - name: manager
                image: {{.Operator}}
`))

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.catalogbot.dev
spec:
  group: demo.catalogbot.dev
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`

var annotationsTmpl = template.Must(template.New("a").Parse(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: {{.Package}}
  operators.operatorframework.io.bundle.channels.v1: stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
`))

type bundleSpec struct {
	Package, Version, Replaces, Operator string
}

// bundleFiles is the bundle directory of one version.
func bundleFiles(s bundleSpec) (fstest.MapFS, error) {
	var csv, ann bytes.Buffer
	if err := csvTmpl.Execute(&csv, s); err != nil {
		return nil, err
	}
	if err := annotationsTmpl.Execute(&ann, s); err != nil {
		return nil, err
	}
	return fstest.MapFS{
		"manifests/" + s.Package + ".clusterserviceversion.yaml": {Data: csv.Bytes(), Mode: 0o644},
		"manifests/widgets.demo.catalogbot.dev.crd.yaml":         {Data: []byte(crd), Mode: 0o644},
		"metadata/annotations.yaml":                              {Data: ann.Bytes(), Mode: 0o644},
	}, nil
}

// tarLayer packs files into a reproducible layer.
func tarLayer(files fstest.MapFS) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	dirs := map[string]bool{}
	for _, n := range names {
		if dir, _, ok := strings.Cut(n, "/"); ok && !dirs[dir] {
			dirs[dir] = true
			if err := tw.WriteHeader(&tar.Header{Name: dir + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return nil, err
			}
		}
		f := files[n]
		if err := tw.WriteHeader(&tar.Header{Name: n, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(f.Data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
}

// pushBundle builds the bundle image of one version (as release --push builds it), pushes it and renders
// its olm.bundle blob from the same files, the way opm render does.
func pushBundle(ctx context.Context, registry string, s bundleSpec) (*catalog.Bundle, error) {
	files, err := bundleFiles(s)
	if err != nil {
		return nil, err
	}
	img, err := bundleimage.BuildFS(ctx, files)
	if err != nil {
		return nil, err
	}
	tag, err := name.NewTag(fmt.Sprintf("%s/demo/%s-bundle:v%s", registry, s.Package, s.Version), name.Insecure)
	if err != nil {
		return nil, err
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		return nil, fmt.Errorf("push %s: %w", tag, err)
	}
	dig, err := img.Digest()
	if err != nil {
		return nil, err
	}
	ref := tag.Context().Digest(dig.String()).String()
	b, err := bundle.Render(ctx, files, ref)
	if err != nil {
		return nil, fmt.Errorf("render bundle %s: %w", ref, err)
	}
	return b, nil
}

// pushOperatorImage pushes a small stand-in for the operator's own image (the demo never runs it).
func pushOperatorImage(ctx context.Context, registry, version string) (string, error) {
	layer, err := tarLayer(fstest.MapFS{"etc/demo-operator/version": {Data: []byte(version + "\n")}})
	if err != nil {
		return "", err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return "", err
	}
	tag, err := name.NewTag(fmt.Sprintf("%s/demo/demo-operator:v%s", registry, version), name.Insecure)
	if err != nil {
		return "", err
	}
	if err := remote.Write(tag, img, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	dig, err := img.Digest()
	if err != nil {
		return "", err
	}
	return tag.Context().Digest(dig.String()).String(), nil
}

// pushBase pushes a two-platform stand-in for the opm base image.
func pushBase(ctx context.Context, registry string) (string, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, arch := range []string{"amd64", "arm64"} {
		layer, err := tarLayer(fstest.MapFS{"bin/README": {Data: []byte("stand-in for opm on " + arch + "\n")}})
		if err != nil {
			return "", err
		}
		img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
		if err != nil {
			return "", err
		}
		cf, err := img.ConfigFile()
		if err != nil {
			return "", err
		}
		cf.OS, cf.Architecture = "linux", arch
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			return "", err
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	tag, err := name.NewTag(registry+"/demo/opm-base:v1", name.Insecure)
	if err != nil {
		return "", err
	}
	if err := remote.WriteIndex(tag, idx, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push %s: %w", tag, err)
	}
	return tag.String(), nil
}
