//go:build tools

package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing/fstest"
	"time"

	"github.com/blang/semver/v4"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/render/bundle"
)

// testPackage is one package of the lane's test catalogs.
type testPackage struct {
	name     string
	versions []string // in upgrade order; each replaces the one before
	crash    bool     // the operator exits at start: the CSV never succeeds
	// inBase: the first version is already in the base catalog (the pull request upgrades it).
	inBase bool
	// inline: also in the inline-style catalogs (olm.bundle.object properties).
	inline bool
	// unpullable: its bundle image is never loaded into the nodes (and no registry serves it).
	unpullable bool
	// noMetadata: its bundle image lacks metadata/annotations.yaml, so the unpack job fails.
	noMetadata bool
	// needs: a CRD the CSV requires that no bundle provides (the InstallPlan cannot resolve).
	needs string
	// ownNamespaceOnly: the CSV supports only the OwnNamespace install mode (OLM v0 installs it; OLM v1
	// requires AllNamespaces and refuses it).
	ownNamespaceOnly bool
	// hostile: the operator's pod is privileged, runs as root and mounts the node's / (and HostMarker,
	// which the kubelet creates on the node when the pod is admitted): what Pod Security Admission must
	// refuse in the smoke's namespaces, kind nodes being privileged containers on the smoke's machine.
	hostile bool
}

// HostMarker is the node directory a hostile operator's pod makes the kubelet create (a hostPath of type
// DirectoryOrCreate): the lane checks that it never appears.
const HostMarker = "/var/tmp/catalogbot-smoke-hostile-was-here"

// testPackages are the lane's fixtures. Every bundle is an image referenced by digest, so OLM unpacks
// each through its bundle-unpack Job.
var testPackages = []testPackage{
	{name: "smoke-good", versions: []string{"0.1.0", "0.2.0"}, inBase: true, inline: true},
	{name: "smoke-new", versions: []string{"0.1.0"}, inline: true},
	{name: "smoke-broken", versions: []string{"0.1.0"}, crash: true},
	{name: "smoke-unpullable", versions: []string{"0.1.0"}, unpullable: true},
	{name: "smoke-badunpack", versions: []string{"0.1.0"}, noMetadata: true},
	{name: "smoke-needsdep", versions: []string{"0.1.0"}, needs: "gizmos.missing.catalogbot.io"},
	{name: "smoke-ownns", versions: []string{"0.1.0"}, ownNamespaceOnly: true},
	{name: "smoke-hostile", versions: []string{"0.1.0"}, hostile: true},
}

// testBundle is one bundle image the lane uses, as bundles.json lists it.
type testBundle struct {
	Package string `json:"package"`
	Bundle  string `json:"bundle"`
	Image   string `json:"image"` // repo@sha256:...
	Archive string `json:"archive,omitempty"`
	// Loaded: the lane loads Archive into the nodes (false: the image is unpullable on purpose).
	Loaded bool `json:"loaded"`
}

// The catalogs testcatalog writes: each a directory of -out.
const (
	catBase       = "base"        // the pull request's base: smoke-good v0.1.0, csv-metadata style
	catHead       = "head"        // its head: every package, csv-metadata style (what v4.17+ catalogs carry)
	catBaseInline = "base-inline" // the same base as opm render writes it by default (olm.bundle.object)
	catHeadInline = "head-inline" // the inline head: smoke-good's upgrade and smoke-new
)

// testCatalogCmd builds the bundle images (OCI layouts and tars under -images) and writes the test
// catalogs under -out, each bundle rendered from its image's content by catalogbot's opm-identical
// bundle renderer: base and head in the olm.csv.metadata form (no inline objects), base-inline and
// head-inline in opm render's default form (olm.bundle.object). -out/bundles.json lists the bundle images.
func testCatalogCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("testcatalog", flag.ContinueOnError)
	out := fs.String("out", "", "output directory of the catalogs")
	images := fs.String("images", "", "output directory of the bundle images")
	opImage := fs.String("operator-image", "", "image of the test operator")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *opImage == "" || *images == "" {
		return errors.New("testcatalog: -out, -images and -operator-image are required")
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	var list []testBundle
	cats := map[string]map[string][]any{} // catalog -> package -> blobs
	add := func(cat, pkg string, blobs ...any) {
		if cats[cat] == nil {
			cats[cat] = map[string][]any{}
		}
		cats[cat][pkg] = append(cats[cat][pkg], blobs...)
	}
	for _, p := range testPackages {
		for _, cat := range p.catalogs() {
			versions := p.versions
			if cat == catBase || cat == catBaseInline {
				versions = versions[:1]
			}
			add(cat, p.name, packageBlobs(p, versions)...)
		}
		for i, v := range p.versions {
			replaces := ""
			if i > 0 {
				replaces = csvName(p.name, p.versions[i-1])
			}
			tb, rendered, err := buildBundle(ctx, p, v, replaces, *opImage, *images)
			if err != nil {
				return fmt.Errorf("package %s: %w", p.name, err)
			}
			list = append(list, tb)
			meta, err := bundle.ToCSVMetadata(rendered)
			if err != nil {
				return fmt.Errorf("bundle %s: %w", tb.Bundle, err)
			}
			for _, cat := range p.catalogs() {
				if (cat == catBase || cat == catBaseInline) && i > 0 {
					continue
				}
				if cat == catBase || cat == catHead {
					add(cat, p.name, meta)
				} else {
					add(cat, p.name, rendered)
				}
			}
		}
	}
	for cat, pkgs := range cats {
		for pkg, blobs := range pkgs {
			var buf bytes.Buffer
			for _, b := range blobs {
				var data []byte
				var err error
				if cb, ok := b.(*catalog.Bundle); ok {
					data, err = bundle.Marshal(cb)
				} else {
					data, err = json.MarshalIndent(b, "", "    ")
					data = append(data, '\n')
				}
				if err != nil {
					return err
				}
				buf.Write(data)
			}
			dir := filepath.Join(*out, cat, pkg)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "catalog.json"), buf.Bytes(), 0o644); err != nil {
				return err
			}
		}
	}
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(*out, "bundles.json"), append(data, '\n'), 0o644)
}

// catalogs are the catalogs p is in.
func (p testPackage) catalogs() []string {
	cats := []string{catHead}
	if p.inBase {
		cats = append(cats, catBase)
	}
	if p.inline {
		cats = append(cats, catHeadInline)
		if p.inBase {
			cats = append(cats, catBaseInline)
		}
	}
	return cats
}

func csvName(pkg, v string) string { return pkg + ".v" + v }

// packageBlobs are p's olm.package and olm.channel blobs for the given versions.
func packageBlobs(p testPackage, versions []string) []any {
	var entries []map[string]any
	for i, v := range versions {
		e := map[string]any{"name": csvName(p.name, v)}
		if i > 0 {
			e["replaces"] = csvName(p.name, versions[i-1])
		}
		entries = append(entries, e)
	}
	return []any{
		map[string]any{"schema": "olm.package", "name": p.name, "defaultChannel": "stable"},
		map[string]any{"schema": "olm.channel", "package": p.name, "name": "stable", "entries": entries},
	}
}

// buildBundle writes the registry+v1 bundle image of p at version v (manifests/ and metadata/ at its
// root, as operator-sdk builds them) and renders it as opm render renders that image.
func buildBundle(ctx context.Context, p testPackage, v, replaces, opImage, imagesDir string) (testBundle, *catalog.Bundle, error) {
	csv, crd, err := bundleObjects(p, v, replaces, opImage)
	if err != nil {
		return testBundle{}, nil, err
	}
	annotations := fmt.Sprintf(`annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: %s
  operators.operatorframework.io.bundle.channels.v1: stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
`, p.name)
	files := fstest.MapFS{
		"manifests/" + p.name + ".clusterserviceversion.yaml": {Data: csv, Mode: 0o644},
		"manifests/widgets." + crdGroup(p.name) + ".crd.yaml": {Data: crd, Mode: 0o644},
		"metadata/annotations.yaml":                           {Data: []byte(annotations), Mode: 0o644},
	}
	inImage := files
	if p.noMetadata {
		inImage = fstest.MapFS{}
		for n, f := range files {
			if !strings.HasPrefix(n, "metadata/") {
				inImage[n] = f
			}
		}
	}
	img, err := bundleImage(inImage)
	if err != nil {
		return testBundle{}, nil, err
	}
	repo := "catalogbot.local/smoke/bundle-" + strings.TrimPrefix(p.name, "smoke-")
	dir := filepath.Join(imagesDir, "bundle-"+strings.TrimPrefix(p.name, "smoke-")+"-v"+v)
	dig, err := writeOCIDigest(ctx, img, repo+":v"+v, dir)
	if err != nil {
		return testBundle{}, nil, err
	}
	ref := repo + "@" + dig
	rendered, err := bundle.Render(ctx, files, ref)
	if err != nil {
		return testBundle{}, nil, fmt.Errorf("rendering bundle %s: %w", ref, err)
	}
	tb := testBundle{Package: p.name, Bundle: csvName(p.name, v), Image: ref, Archive: dir + ".tar", Loaded: !p.unpullable}
	if p.unpullable {
		tb.Archive = ""
		if err := os.RemoveAll(dir); err != nil {
			return testBundle{}, nil, err
		}
		if err := os.Remove(dir + ".tar"); err != nil {
			return testBundle{}, nil, err
		}
	}
	return tb, rendered, nil
}

// bundleImage is a one-layer image holding files (directories 0755, files as given), for linux/amd64.
func bundleImage(files fstest.MapFS) (v1.Image, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	made := map[string]bool{}
	for _, n := range names {
		if d := path.Dir(n); d != "." && !made[d] {
			made[d] = true
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: epoch}); err != nil {
				return nil, err
			}
		}
		f := files[n]
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: n, Mode: int64(f.Mode.Perm()), Size: int64(len(f.Data)), ModTime: epoch}); err != nil {
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
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Created = v1.Time{Time: epoch.UTC()}
	cf.Config.Labels = map[string]string{
		"operators.operatorframework.io.bundle.mediatype.v1": "registry+v1",
		"operators.operatorframework.io.bundle.manifests.v1": "manifests/",
		"operators.operatorframework.io.bundle.metadata.v1":  "metadata/",
	}
	return mutate.ConfigFile(img, cf)
}

func crdGroup(pkg string) string { return pkg + ".catalogbot.io" }

// bundleObjects returns the CSV and the CRD it owns, as JSON ([]byte marshals to base64).
func bundleObjects(p testPackage, v, replaces, opImage string) (csvJSON, crdJSON []byte, err error) {
	group := crdGroup(p.name)
	crd := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "widgets." + group},
		"spec": map[string]any{
			"group": group,
			"names": map[string]any{"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget"},
			"scope": "Namespaced",
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			}},
		},
	}
	if crdJSON, err = json.Marshal(crd); err != nil {
		return nil, nil, err
	}
	sv, err := semver.Parse(v)
	if err != nil {
		return nil, nil, err
	}
	env := []corev1.EnvVar{{Name: "WATCH_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['olm.targetNamespaces']"}}}}
	if p.crash {
		env = append(env, corev1.EnvVar{Name: "SMOKE_CRASH", Value: "1"})
	}
	labels := map[string]string{"app": p.name}
	nonRoot := true
	noEscalation := false
	dep := appsv1.DeploymentSpec{
		Replicas: ptr(int32(1)),
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: labels},
			Spec: corev1.PodSpec{
				ServiceAccountName: "smoke-operator",
				SecurityContext:    &corev1.PodSecurityContext{RunAsNonRoot: &nonRoot, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
				Containers: []corev1.Container{{
					Name:            "operator",
					Image:           opImage,
					ImagePullPolicy: corev1.PullIfNotPresent,
					Env:             env,
					Ports:           []corev1.ContainerPort{{Name: "health", ContainerPort: 8080}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
						PeriodSeconds: 2},
					SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &noEscalation, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				}},
			},
		},
	}
	if p.hostile {
		hostileSpec(&dep.Template.Spec)
	}
	csv := v1alpha1.ClusterServiceVersion{
		TypeMeta: metav1.TypeMeta{APIVersion: "operators.coreos.com/v1alpha1", Kind: "ClusterServiceVersion"},
		ObjectMeta: metav1.ObjectMeta{Name: csvName(p.name, v), Annotations: map[string]string{
			"containerImage": opImage, "capabilities": "Basic Install", "categories": "Developer Tools"}},
		Spec: v1alpha1.ClusterServiceVersionSpec{
			DisplayName: p.name, Description: "catalogbot's offline smoke-test operator", Version: version.OperatorVersion{Version: sv},
			Replaces: replaces, Maturity: "alpha", MinKubeVersion: "1.25.0",
			Provider: v1alpha1.AppLink{Name: "catalogbot"},
			InstallModes: []v1alpha1.InstallMode{
				{Type: v1alpha1.InstallModeTypeOwnNamespace, Supported: true},
				{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: !p.ownNamespaceOnly},
				{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: !p.ownNamespaceOnly},
			},
			CustomResourceDefinitions: v1alpha1.CustomResourceDefinitions{Owned: []v1alpha1.CRDDescription{{
				Name: "widgets." + group, Version: "v1", Kind: "Widget", DisplayName: "Widget", Description: "a test resource"}}},
			InstallStrategy: v1alpha1.NamedInstallStrategy{
				StrategyName: v1alpha1.InstallStrategyNameDeployment,
				StrategySpec: v1alpha1.StrategyDetailsDeployment{
					DeploymentSpecs: []v1alpha1.StrategyDeploymentSpec{{Name: p.name + "-operator", Spec: dep}},
					Permissions: []v1alpha1.StrategyDeploymentPermissions{{ServiceAccountName: "smoke-operator", Rules: []rbacv1.PolicyRule{
						{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "watch"}},
						{APIGroups: []string{group}, Resources: []string{"widgets"}, Verbs: []string{"get", "list", "watch"}},
					}}},
				},
			},
		},
	}
	if p.needs != "" {
		group := strings.SplitN(p.needs, ".", 2)[1]
		csv.Spec.CustomResourceDefinitions.Required = []v1alpha1.CRDDescription{{
			Name: p.needs, Version: "v1", Kind: "Gizmo", DisplayName: "Gizmo", Description: "provided by no bundle of " + group}}
	}
	if csvJSON, err = json.Marshal(csv); err != nil {
		return nil, nil, err
	}
	return csvJSON, crdJSON, nil
}

func ptr[T any](v T) *T { return &v }

// hostileSpec turns the operator's pod into the attack: privileged, as root, the node's / mounted at
// /host and HostMarker created on the node.
func hostileSpec(spec *corev1.PodSpec) {
	root, yes := int64(0), true
	dirOrCreate := corev1.HostPathDirectoryOrCreate
	spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &root}
	c := &spec.Containers[0]
	c.SecurityContext = &corev1.SecurityContext{Privileged: &yes}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "host", MountPath: "/host"}, {Name: "marker", MountPath: "/marker"}}
	spec.Volumes = []corev1.Volume{
		{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}},
		{Name: "marker", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: HostMarker, Type: &dirOrCreate}}},
	}
}
