//go:build tools

package main

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var testOLMv1Options = olmv1Options{
	version: "v1.11.0", catalogdImage: "catalogbot.local/catalogd:v1.11.0",
	operatorControllerImage: "catalogbot.local/operator-controller:v1.11.0", registryImage: "catalogbot.local/registry:v1",
}

func testOLMv1Manifests(t *testing.T) map[string][]*unstructured.Unstructured {
	t.Helper()
	standard, err := os.ReadFile("testdata/olmv1-standard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ca, err := newCA()
	if err != nil {
		t.Fatal(err)
	}
	files, err := olmv1Manifests(standard, testOLMv1Options, ca)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*unstructured.Unstructured{}
	for name, data := range files {
		if out[name], err = decodeYAMLStream(data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, u := range objs {
		if u.GetKind() == kind && u.GetName() == name {
			return u
		}
	}
	return nil
}

// TestOLMv1Manifests: cert-manager is gone, both controllers run our images without leader election and
// with registries.conf mounted, the catalogd Secret has the version's name and the webhook trusts the CA
// that signed both serving certificates for their Service names.
func TestOLMv1Manifests(t *testing.T) {
	m := testOLMv1Manifests(t)
	if names := slices.Sorted(func(yield func(string) bool) {
		for n := range m {
			if !yield(n) {
				return
			}
		}
	}); !slices.Equal(names, []string{"00-olmv1.yaml", "10-olmv1-certs.yaml", "20-registry.yaml"}) {
		t.Fatalf("files = %v", names)
	}
	install := m["00-olmv1.yaml"]
	for _, u := range install {
		if strings.HasPrefix(u.GetAPIVersion(), "cert-manager.io/") {
			t.Errorf("cert-manager object %s %s kept", u.GetKind(), u.GetName())
		}
	}
	for name, image := range map[string]string{
		"catalogd-controller-manager": testOLMv1Options.catalogdImage, "operator-controller-controller-manager": testOLMv1Options.operatorControllerImage,
	} {
		d := find(install, "Deployment", name)
		if d == nil {
			t.Fatalf("no Deployment %s", name)
		}
		cs, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		c := cs[0].(map[string]any)
		if c["image"] != image || c["imagePullPolicy"] != "IfNotPresent" {
			t.Errorf("%s: image %v (%v), want %s IfNotPresent", name, c["image"], c["imagePullPolicy"], image)
		}
		if slices.Contains(c["args"].([]any), any("--leader-elect")) {
			t.Errorf("%s: --leader-elect kept", name)
		}
		if !strings.Contains(toJSON(t, c["volumeMounts"]), `"mountPath":"/etc/containers"`) {
			t.Errorf("%s: registries.conf not mounted at /etc/containers: %v", name, c["volumeMounts"])
		}
		vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
		if !strings.Contains(toJSON(t, vols), `"configMap":{"name":"`+registriesConf+`"}`) {
			t.Errorf("%s: no registries.conf volume: %v", name, vols)
		}
		if strings.Contains(toJSON(t, vols), "git-version") {
			t.Errorf("%s: still mounts the -git-version Secret", name)
		}
	}

	hook := find(install, "MutatingWebhookConfiguration", "catalogd-mutating-webhook-configuration")
	if _, ok := hook.GetAnnotations()["cert-manager.io/inject-ca-from-secret"]; ok {
		t.Error("cert-manager's injection annotation kept")
	}
	hooks, _, _ := unstructured.NestedSlice(hook.Object, "webhooks")
	caB64, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
	caPEM, err := base64.StdEncoding.DecodeString(caB64)
	if err != nil {
		t.Fatalf("caBundle: %v", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("caBundle holds no certificate: %q", caPEM)
	}
	certs := m["10-olmv1-certs.yaml"]
	for secret, dns := range map[string]string{
		"catalogd-service-cert-v1.11.0": "catalogd-service.olmv1-system.svc",
		"operator-controller-cert":      "operator-controller-service.olmv1-system.svc",
	} {
		s := find(certs, "Secret", secret)
		if s == nil || s.GetNamespace() != olmv1Namespace {
			t.Fatalf("no Secret %s/%s", olmv1Namespace, secret)
		}
		data, _, _ := unstructured.NestedStringMap(s.Object, "data")
		crtPEM, _ := base64.StdEncoding.DecodeString(data["tls.crt"])
		block, _ := pem.Decode(crtPEM)
		if block == nil {
			t.Fatalf("%s: tls.crt is not PEM", secret)
		}
		crt, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("%s: %v", secret, err)
		}
		for _, name := range []string{dns, dns + ".cluster.local"} {
			if _, err := crt.Verify(x509.VerifyOptions{Roots: roots, DNSName: name, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
				t.Errorf("%s: not valid for %s under the webhook's CA: %v", secret, name, err)
			}
		}
		if ca, _ := base64.StdEncoding.DecodeString(data["ca.crt"]); string(ca) != string(caPEM) {
			t.Errorf("%s: ca.crt is not the webhook's CA", secret)
		}
		if key, _ := base64.StdEncoding.DecodeString(data["tls.key"]); !strings.Contains(string(key), "PRIVATE KEY") {
			t.Errorf("%s: tls.key is not a PEM key", secret)
		}
	}
	conf := find(certs, "ConfigMap", registriesConf)
	if conf == nil || conf.GetNamespace() != olmv1Namespace {
		t.Fatal("no registries.conf ConfigMap in olmv1-system")
	}
	text, _, _ := unstructured.NestedString(conf.Object, "data", "registries.conf")
	for _, want := range []string{`prefix = "catalogbot.local"`, `location = "registry.catalogbot-registry.svc.cluster.local:5000"`, "insecure = true"} {
		if !strings.Contains(text, want) {
			t.Errorf("registries.conf lacks %s:\n%s", want, text)
		}
	}

	reg := m["20-registry.yaml"]
	if ns := find(reg, "Namespace", registryNamespace); ns == nil {
		t.Error("no registry Namespace")
	}
	svc := find(reg, "Service", registryService)
	if svc == nil || svc.GetNamespace() != registryNamespace || !strings.Contains(toJSON(t, svc.Object["spec"]), `"nodePort":30500`) {
		t.Errorf("registry Service = %v", svc)
	}
	if d := find(reg, "Deployment", registryService); d == nil || !strings.Contains(toJSON(t, d.Object), testOLMv1Options.registryImage) {
		t.Errorf("registry Deployment = %v", d)
	}
}

// A standard.yaml without one of the controllers (renamed upstream, say) is an error naming it, not an
// install that silently lacks it.
func TestOLMv1ManifestsMissingController(t *testing.T) {
	standard, err := os.ReadFile("testdata/olmv1-standard.yaml")
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(standard), "name: operator-controller-controller-manager", "name: renamed-manager", 1)
	ca, err := newCA()
	if err != nil {
		t.Fatal(err)
	}
	_, err = olmv1Manifests([]byte(broken), testOLMv1Options, ca)
	if err == nil || !strings.Contains(err.Error(), "renamed-manager") {
		t.Errorf("err = %v, want the unexpected Deployment named", err)
	}
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
