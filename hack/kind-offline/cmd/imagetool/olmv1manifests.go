//go:build tools

package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The names the lane's OLM v1 install uses (see ../../README.md): the in-cluster registry that serves the
// catalog and bundle images to catalogd and operator-controller, and the image prefix mapped to it.
const (
	olmv1Namespace    = "olmv1-system"
	registryNamespace = "catalogbot-registry"
	registryService   = "registry"
	registryPort      = 5000
	// RegistryNodePort is where the host pushes to, on the node container's IP.
	registryNodePort = 30500
	imagePrefix      = "catalogbot.local"
	registriesConf   = "catalogbot-registries-conf"
)

// registryHost is the in-cluster registry as the controllers reach it (Service DNS, plain HTTP).
func registryHost() string {
	return fmt.Sprintf("%s.%s.svc.cluster.local:%d", registryService, registryNamespace, registryPort)
}

type olmv1Options struct {
	version, catalogdImage, operatorControllerImage, registryImage string
}

// olmv1ManifestsCmd turns operator-controller's manifests/standard.yaml into the lane's self-contained
// install directory (applied in name order): 00-olmv1.yaml (standard.yaml without cert-manager, our
// images, no leader election, registries.conf mounted in both controllers, the webhook's caBundle set),
// 10-olmv1-certs.yaml (our CA's serving-cert Secrets and the registries.conf ConfigMap) and
// 20-registry.yaml (the in-cluster registry in its own namespace).
func olmv1ManifestsCmd(args []string) error {
	fs := flag.NewFlagSet("olmv1manifests", flag.ContinueOnError)
	standard := fs.String("standard", "", "operator-controller's manifests/standard.yaml")
	out := fs.String("out", "", "output directory (replaced)")
	var o olmv1Options
	fs.StringVar(&o.version, "version", "", "operator-controller version (names the catalogd Secret)")
	fs.StringVar(&o.catalogdImage, "catalogd-image", "", "catalogd image")
	fs.StringVar(&o.operatorControllerImage, "operator-controller-image", "", "operator-controller image")
	fs.StringVar(&o.registryImage, "registry-image", "", "in-cluster registry image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *standard == "" || *out == "" || o.version == "" || o.catalogdImage == "" || o.operatorControllerImage == "" || o.registryImage == "" {
		return errors.New("olmv1manifests: -standard, -out, -version and the three -*-image flags are required")
	}
	data, err := os.ReadFile(*standard)
	if err != nil {
		return fmt.Errorf("olmv1manifests: %w", err)
	}
	ca, err := newCA()
	if err != nil {
		return err
	}
	files, err := olmv1Manifests(data, o, ca)
	if err != nil {
		return fmt.Errorf("olmv1manifests: %s: %w", *standard, err)
	}
	if err := os.RemoveAll(*out); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(*out, name), content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// olmv1Manifests returns the install directory's files by name.
func olmv1Manifests(standard []byte, o olmv1Options, ca *certAuthority) (map[string][]byte, error) {
	catalogdSecret := "catalogd-service-cert-" + o.version
	objs, err := decodeYAMLStream(bytes.ReplaceAll(standard, []byte("catalogd-service-cert-git-version"), []byte(catalogdSecret)))
	if err != nil {
		return nil, err
	}
	images := map[string]string{
		"catalogd-controller-manager":            o.catalogdImage,
		"operator-controller-controller-manager": o.operatorControllerImage,
	}
	var kept []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, u := range objs {
		if strings.HasPrefix(u.GetAPIVersion(), "cert-manager.io/") {
			continue
		}
		switch u.GetKind() {
		case "Deployment":
			img, ok := images[u.GetName()]
			if !ok || u.GetNamespace() != olmv1Namespace {
				return nil, fmt.Errorf("unexpected Deployment %s/%s", u.GetNamespace(), u.GetName())
			}
			if err := rewriteController(u, img); err != nil {
				return nil, fmt.Errorf("deployment %s/%s: %w", u.GetNamespace(), u.GetName(), err)
			}
			seen[u.GetName()] = true
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			if err := setCABundle(u, ca.certPEM); err != nil {
				return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
			}
		}
		kept = append(kept, u)
	}
	for name := range images {
		if !seen[name] {
			return nil, fmt.Errorf("no Deployment %s/%s", olmv1Namespace, name)
		}
	}
	certs, err := olmv1Secrets(ca, catalogdSecret)
	if err != nil {
		return nil, err
	}
	certs = append(certs, registriesConfMap())
	files := map[string][]byte{}
	for name, list := range map[string][]*unstructured.Unstructured{
		"00-olmv1.yaml":       kept,
		"10-olmv1-certs.yaml": certs,
		"20-registry.yaml":    registryObjects(o.registryImage),
	} {
		if files[name], err = encodeYAMLStream(list); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return files, nil
}

// rewriteController swaps the manager's image (IfNotPresent: it is loaded into the node), drops leader
// election (a restarted pod would wait for the old lease) and mounts registries.conf at /etc/containers.
func rewriteController(u *unstructured.Unstructured, image string) error {
	containers, _, err := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if err != nil || len(containers) == 0 {
		return fmt.Errorf("no containers (%v)", err)
	}
	found := false
	for i, x := range containers {
		c, _ := x.(map[string]any)
		if c["name"] != "manager" {
			continue
		}
		found = true
		c["image"] = image
		c["imagePullPolicy"] = "IfNotPresent"
		args, _ := c["args"].([]any)
		c["args"] = slices.DeleteFunc(args, func(a any) bool { return a == "--leader-elect" })
		mounts, _ := c["volumeMounts"].([]any)
		c["volumeMounts"] = append(mounts, map[string]any{"name": registriesConf, "mountPath": "/etc/containers", "readOnly": true})
		containers[i] = c
	}
	if !found {
		return errors.New("no container named manager")
	}
	if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		return err
	}
	volumes, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "volumes")
	volumes = append(volumes, map[string]any{"name": registriesConf, "configMap": map[string]any{"name": registriesConf}})
	return unstructured.SetNestedSlice(u.Object, volumes, "spec", "template", "spec", "volumes")
}

// setCABundle sets every webhook's caBundle and drops cert-manager's injection annotation.
func setCABundle(u *unstructured.Unstructured, caPEM []byte) error {
	ann := u.GetAnnotations()
	delete(ann, "cert-manager.io/inject-ca-from-secret")
	u.SetAnnotations(ann)
	hooks, _, err := unstructured.NestedSlice(u.Object, "webhooks")
	if err != nil || len(hooks) == 0 {
		return fmt.Errorf("no webhooks (%v)", err)
	}
	for i, x := range hooks {
		h, _ := x.(map[string]any)
		cc, _ := h["clientConfig"].(map[string]any)
		if cc == nil {
			return fmt.Errorf("webhook %v has no clientConfig", h["name"])
		}
		cc["caBundle"] = base64.StdEncoding.EncodeToString(caPEM)
		hooks[i] = h
	}
	return unstructured.SetNestedSlice(u.Object, hooks, "webhooks")
}

// registriesConfMap maps the catalogbot.local prefix to the in-cluster registry, plain HTTP. The second
// entry is what containers/image consults for the rewritten host's TLS setting.
func registriesConfMap() *unstructured.Unstructured {
	conf := fmt.Sprintf(`[[registry]]
prefix = %q
location = %q
insecure = true

[[registry]]
location = %q
insecure = true
`, imagePrefix, registryHost(), registryHost())
	return obj("v1", "ConfigMap", olmv1Namespace, registriesConf, map[string]any{"data": map[string]any{"registries.conf": conf}})
}

// registryObjects is the in-cluster registry: its namespace (not olmv1-system, whose Pod Security is
// restricted), Deployment and a NodePort Service (the host pushes through the node's IP).
func registryObjects(image string) []*unstructured.Unstructured {
	labels := map[string]any{"app.kubernetes.io/name": "catalogbot-registry"}
	return []*unstructured.Unstructured{
		obj("v1", "Namespace", "", registryNamespace, nil),
		obj("apps/v1", "Deployment", registryNamespace, registryService, map[string]any{"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": int64(65532)},
					"containers": []any{map[string]any{
						"name": "registry", "image": image, "imagePullPolicy": "IfNotPresent",
						"args":           []any{fmt.Sprintf("-addr=:%d", registryPort)},
						"ports":          []any{map[string]any{"containerPort": int64(registryPort), "name": "registry"}},
						"readinessProbe": map[string]any{"httpGet": map[string]any{"path": "/v2/", "port": int64(registryPort)}, "periodSeconds": int64(2)},
						"securityContext": map[string]any{
							"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
							"capabilities": map[string]any{"drop": []any{"ALL"}},
						},
					}},
				},
			},
		}}),
		obj("v1", "Service", registryNamespace, registryService, map[string]any{"spec": map[string]any{
			"type":     "NodePort",
			"selector": labels,
			"ports": []any{map[string]any{
				"name": "registry", "port": int64(registryPort), "targetPort": int64(registryPort), "nodePort": int64(registryNodePort),
			}},
		}}),
	}
}

func obj(apiVersion, kind, namespace, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	for k, v := range fields {
		u.Object[k] = v
	}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

func decodeYAMLStream(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

func encodeYAMLStream(objs []*unstructured.Unstructured) ([]byte, error) {
	var b bytes.Buffer
	for _, u := range objs {
		y, err := yaml.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.Bytes(), nil
}
