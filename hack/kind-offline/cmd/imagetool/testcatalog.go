//go:build tools

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/api/pkg/lib/version"
	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// testPackage is one package of the lane's test catalog.
type testPackage struct {
	name     string
	versions []string // in upgrade order; each replaces the one before
	crash    bool     // the operator exits at start (crash loop)
}

// TestPackages are the lane's fixtures: a good operator with an upgrade pair and a broken one.
var testPackages = []testPackage{
	{name: "smoke-good", versions: []string{"0.1.0", "0.2.0"}},
	{name: "smoke-broken", versions: []string{"0.1.0"}, crash: true},
}

// testCatalogCmd writes the test catalog (one directory per package, FBC JSON). Bundles carry their
// manifests inline as olm.bundle.object properties and have no bundle image: OLM installs them without
// an unpack Job.
func testCatalogCmd(args []string) error {
	fs := flag.NewFlagSet("testcatalog", flag.ContinueOnError)
	out := fs.String("out", "", "output catalog directory")
	opImage := fs.String("operator-image", "", "image of the test operator")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || *opImage == "" {
		return errors.New("testcatalog: -out and -operator-image are required")
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	for _, p := range testPackages {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		blobs, err := packageBlobs(p, *opImage)
		if err != nil {
			return fmt.Errorf("package %s: %w", p.name, err)
		}
		for _, b := range blobs {
			if err := enc.Encode(b); err != nil {
				return err
			}
		}
		dir := filepath.Join(*out, p.name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "catalog.json"), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func csvName(pkg, v string) string { return pkg + ".v" + v }

func packageBlobs(p testPackage, opImage string) ([]any, error) {
	blobs := []any{map[string]any{"schema": "olm.package", "name": p.name, "defaultChannel": "stable"}}
	var entries []map[string]any
	for i, v := range p.versions {
		e := map[string]any{"name": csvName(p.name, v)}
		if i > 0 {
			e["replaces"] = csvName(p.name, p.versions[i-1])
		}
		entries = append(entries, e)
	}
	blobs = append(blobs, map[string]any{"schema": "olm.channel", "package": p.name, "name": "stable", "entries": entries})
	for i, v := range p.versions {
		replaces := ""
		if i > 0 {
			replaces = csvName(p.name, p.versions[i-1])
		}
		csv, crd, err := bundleObjects(p, v, replaces, opImage)
		if err != nil {
			return nil, err
		}
		group := crdGroup(p.name)
		blobs = append(blobs, map[string]any{
			"schema":  "olm.bundle",
			"name":    csvName(p.name, v),
			"package": p.name,
			"image":   "",
			"properties": []any{
				map[string]any{"type": "olm.package", "value": map[string]any{"packageName": p.name, "version": v}},
				map[string]any{"type": "olm.gvk", "value": map[string]any{"group": group, "kind": "Widget", "version": "v1"}},
				map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": crd}},
				map[string]any{"type": "olm.bundle.object", "value": map[string]any{"data": csv}},
			},
			"relatedImages": []any{map[string]any{"name": "operator", "image": opImage}},
		})
	}
	return blobs, nil
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
				{Type: v1alpha1.InstallModeTypeSingleNamespace, Supported: true},
				{Type: v1alpha1.InstallModeTypeMultiNamespace, Supported: false},
				{Type: v1alpha1.InstallModeTypeAllNamespaces, Supported: true},
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
	if csvJSON, err = json.Marshal(csv); err != nil {
		return nil, nil, err
	}
	return csvJSON, crdJSON, nil
}

func ptr[T any](v T) *T { return &v }
