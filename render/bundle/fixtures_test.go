package bundle

import (
	"fmt"
	"maps"
	"strings"
)

// A small but complete bundle; edge cases are variations of it.
const (
	baseCSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: demo.v1.2.3
  annotations:
    olm.skipRange: '<1.2.3'
    capabilities: Basic Install
    description: "Demo <b>operator</b> & friends"
spec:
  displayName: Demo
  description: Manages <widgets> & gadgets.
  version: 1.2.3
  replaces: demo.v1.2.2
  customresourcedefinitions:
    owned:
    - name: widgets.demo.example.com
      version: v1
      kind: Widget
      displayName: Widget
    required:
    - name: gadgets.other.example.com
      version: v1alpha1
      kind: Gadget
  install:
    strategy: deployment
    spec:
      deployments:
      - name: demo-operator
        spec:
          replicas: 1
          selector:
            matchLabels: {app: demo}
          template:
            metadata:
              labels: {app: demo}
            spec:
              containers:
              - name: manager
                image: quay.io/demo/operator:v1.2.3
                resources:
                  limits: {cpu: 500m, memory: 128Mi}
              initContainers:
              - name: init
                image: quay.io/demo/init:v1
  relatedImages:
  - name: operand
    image: quay.io/demo/operand:v1
  installModes:
  - type: AllNamespaces
    supported: true
  - type: OwnNamespace
    supported: false
  keywords: [demo, widgets]
  maintainers:
  - name: Demo Team
    email: demo@example.com
  provider:
    name: Example
  links:
  - name: Docs
    url: https://example.com/docs?a=1&b=2
  maturity: alpha
  minKubeVersion: 1.25.0
`
	baseCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.example.com
spec:
  group: demo.example.com
  names:
    kind: Widget
    plural: widgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1, maximum: 1e3}
              ratio: {type: number, default: 1.0}
`
	baseAnnotations = `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: demo
  operators.operatorframework.io.bundle.channels.v1: stable,beta
  operators.operatorframework.io.bundle.channel.default.v1: stable
`
)

func baseFiles() map[string]string {
	return map[string]string{
		"manifests/demo.clusterserviceversion.yaml": baseCSV,
		"manifests/widgets.crd.yaml":                baseCRD,
		"metadata/annotations.yaml":                 baseAnnotations,
	}
}

// variant is the base bundle with some files replaced ("" deletes a file).
func variant(changes map[string]string) map[string]string {
	files := baseFiles()
	maps.Copy(files, changes)
	for k, v := range files {
		if v == "" {
			delete(files, k)
		}
	}
	return files
}

// csvWith is the base CSV with old replaced by new (which must occur).
func csvWith(pairs ...string) string {
	s := baseCSV
	for i := 0; i+1 < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			panic("csvWith: " + pairs[i] + " not in the base CSV")
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// verdict is what a synthesized case should give compared with opm.
type verdict string

const (
	same     verdict = "same"     // both render the same blob, or both fail
	stricter verdict = "stricter" // opm renders it, Render refuses it on purpose
)

type edgeCase struct {
	name  string
	files map[string]string
	want  verdict
	// errHas is a part of Render's error message when it fails.
	errHas string
}

var edgeCases = []edgeCase{
	{name: "base", files: baseFiles(), want: same},
	{name: "json-manifests", want: same, files: variant(map[string]string{
		"manifests/widgets.crd.yaml": "",
		"manifests/widgets.crd.json": `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.demo.example.com"},
 "spec":{"group":"demo.example.com","names":{"kind":"Widget","plural":"widgets"},"scope":"Namespaced",
 "versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-big":12345678901234567890,"x-f":2.50}}}]}}`,
		"metadata/annotations.yaml": `{"annotations": {"operators.operatorframework.io.bundle.package.v1": "demo", "operators.operatorframework.io.bundle.channels.v1": "stable"}}`,
	})},
	{name: "multi-document-and-separators", want: same, files: variant(map[string]string{
		"manifests/widgets.crd.yaml": "--- # start\n" + baseCRD + "---\napiVersion: v1\nkind: Service\nmetadata: {name: dropped}\n",
		"manifests/svc.yaml":         "apiVersion: v1\nkind: Service\nmetadata:\n  name: demo-metrics\nspec:\n  ports:\n  - port: 8443\n    targetPort: https\n---\n",
	})},
	{name: "crlf", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": strings.ReplaceAll(baseCSV, "\n", "\r\n"),
	})},
	{name: "yaml-1.1-scalars", want: same, files: variant(map[string]string{
		"manifests/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: scalars}
data:
  a: yes
  b: off
  c: 0777
  d: 1_000
  e: 12345678901234567890
  f: 1e3
  g: .5
  h: 2001-12-14
  i: ~
  j: 0x1F
  k: "<&>"
  l: "\u2028 ünïcödé"
  m: -0
  n: 1.0
`,
	})},
	{name: "properties-and-dependencies", want: same, files: variant(map[string]string{
		"metadata/properties.yaml": `properties:
- type: olm.maxOpenShiftVersion
  value: "4.16"
- type: olm.label
  value: {label: "tier<1>"}
- type: olm.gvk
  value: {group: extra.example.com, kind: Extra, version: v1}
- type: olm.package
  value: {packageName: ignored, version: 0.0.1}
- type: olm.maxOpenShiftVersion
  value: "4.16"
`,
		"metadata/dependencies.yaml": `dependencies:
- type: olm.package
  value: {packageName: etcd, version: ">=0.9.0 <1.0.0"}
- type: olm.gvk
  value: {group: etcd.database.coreos.com, kind: EtcdCluster, version: v1beta2}
- type: olm.label
  value: {label: "needs-storage"}
- type: olm.constraint
  value:
    failureMessage: needs a gpu
    cel: {rule: 'properties.exists(p, p.type == "gpu")'}
`,
	})},
	{name: "csv-properties-annotation", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("    capabilities: Basic Install\n",
			"    capabilities: Basic Install\n    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.14\"}, {\"type\":\"olm.package\",\"value\":{\"packageName\":\"other\",\"version\":\"9.9.9\"}}]'\n"),
	})},
	{name: "csv-properties-annotation-malformed", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("    capabilities: Basic Install\n",
			"    capabilities: Basic Install\n    olm.properties: '[{\"type\": \"a.b\", \"value\": 1}, {\"type\": 2, \"value\": {\"x\": 1}}]'\n"),
	})},
	{name: "numeric-release", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  version: 1.2.3\n", "  version: 1.2.3\n  release: 2\n"),
	})},
	{name: "v1beta1-crd", want: same, files: variant(map[string]string{
		"manifests/widgets.crd.yaml": `apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata:
  name: widgets.demo.example.com
spec:
  group: demo.example.com
  version: v1
  names: {kind: Widget, plural: widgets}
  versions:
  - {name: v1, served: true, storage: true}
  - {name: v1alpha1, served: true, storage: false}
`,
	})},
	{name: "api-services-and-unknown-crd-version", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  install:\n", `  apiservicedefinitions:
    owned:
    - {group: metrics.demo.example.com, version: v1, kind: Metric, name: metrics, deploymentName: demo-operator}
    required:
    - {group: apps.example.com, version: v2, kind: App, name: apps}
  install:
`),
		"manifests/zz.crd.yaml": "apiVersion: apiextensions.k8s.io/v2\nkind: CustomResourceDefinition\nmetadata: {name: future.demo.example.com}\nspec: {group: demo.example.com}\n",
	})},
	{name: "related-images-overlap", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith(
			"  - name: operand\n    image: quay.io/demo/operand:v1\n",
			"  - name: operand\n    image: quay.io/demo/operand:v1\n  - name: manager\n    image: quay.io/demo/operator:v1.2.3\n  - name: operand-again\n    image: quay.io/demo/operand:v1\n  - name: bundle\n    image: "+testImage+"\n",
			"                image: quay.io/demo/operator:v1.2.3\n", "                image: quay.io/demo/operator:v1.2.3\n              - name: sidecar\n                image: "+testImage+"\n"),
	})},
	{name: "no-related-images", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("    strategy: deployment\n", "    strategy: custom\n",
			"  relatedImages:\n  - name: operand\n    image: quay.io/demo/operand:v1\n", "  relatedImages: []\n"),
	})},
	// More than 12 related images, some image listed under two names: opm's sort is unstable there, and
	// only the same sort puts the equal images in opm's order.
	{name: "many-related-images-with-duplicates", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  - name: operand\n    image: quay.io/demo/operand:v1\n", manyRelatedImages())})},
	{name: "skipped-files", want: same, files: variant(map[string]string{
		"manifests/.hidden.yaml":       "not: [valid",
		"manifests/README.md":          "# Demo\n\nThis is: not: yaml: at all\n",
		"manifests/notes.txt":          "",
		"manifests/sub/extra.yaml":     "apiVersion: v1\nkind: Secret\nmetadata: {name: nested}\n",
		"manifests/empty.yaml":         "",
		"manifests/comments.yaml":      "# nothing here\n",
		"metadata/.DS_Store":           "\x00\x01binary",
		"metadata/sub/annotations.yml": baseAnnotations,
	})},
	{name: "annotations-under-another-name", want: same, files: variant(map[string]string{
		"metadata/annotations.yaml": "",
		"metadata/a-notes.yaml":     "notes: nothing for opm\n",
		"metadata/bundle.yaml":      baseAnnotations,
		"metadata/zz.yaml":          strings.ReplaceAll(baseAnnotations, "demo", "later-file-ignored"),
	})},
	{name: "csv-without-annotations-or-labels", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith(
			"  annotations:\n    olm.skipRange: '<1.2.3'\n    capabilities: Basic Install\n    description: \"Demo <b>operator</b> & friends\"\n", "  labels:\n    operatorframework.io/arch.amd64: supported\n"),
	})},
	{name: "csv-metadata-in-properties-file", want: same, files: variant(map[string]string{
		"metadata/properties.yaml": "properties:\n- type: olm.csv.metadata\n  value: {displayName: Prewritten}\n",
	})},
	{name: "json-csv", want: same, files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": "",
		"manifests/demo.csv.json": `  {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
  "metadata": {"name": "demo.v1.2.3", "annotations": {"a": "<tag>"}},
  "spec": {"version": "1.2.3", "displayName": "JSON",
    "customresourcedefinitions": {"owned": [{"name": "widgets.demo.example.com", "version": "v1", "kind": "Widget"}]},
    "install": {"strategy": "deployment", "spec": {"deployments": [{"name": "d", "spec": {"selector": {}, "template": {"spec": {"containers": [{"name": "c", "image": "quay.io/demo/json:1"}]}}}}]}}}}
{"trailing": "document ignored"}`,
	})},

	// opm fails on these; so must Render.
	{name: "reject-no-annotations", want: same, errHas: "no annotations file", files: variant(map[string]string{"metadata/annotations.yaml": ""})},
	{name: "reject-no-csv", want: same, errHas: "no ClusterServiceVersion", files: variant(map[string]string{"manifests/demo.clusterserviceversion.yaml": ""})},
	{name: "reject-no-objects", want: same, errHas: "no Kubernetes objects", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": "", "manifests/widgets.crd.yaml": ""})},
	{name: "reject-owned-crd-missing", want: same, errHas: "no CustomResourceDefinition in manifests/ serves it", files: variant(map[string]string{"manifests/widgets.crd.yaml": ""})},
	{name: "reject-numeric-version", want: same, errHas: "spec.version", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  version: 1.2.3\n", "  version: 1.2\n")})},
	{name: "reject-bad-deployment-spec", want: same, errHas: "spec.install", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("          replicas: 1\n", "          replicas: one\n")})},
	{name: "reject-bad-resource-quantity", want: same, errHas: "spec.install", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("memory: 128Mi", "memory: lots")})},
	{name: "reject-crd-foreign-group", want: same, errHas: "decoding v1 CustomResourceDefinition", files: variant(map[string]string{
		"manifests/widgets.crd.yaml": strings.Replace(baseCRD, "apiextensions.k8s.io/v1", "example.com/v1", 1)})},
	// apimachinery's deserializer reads apiVersion again with case folding: this one names the v1beta1 type
	{name: "reject-crd-case-folded-api-version", want: same, errHas: "no kind", files: variant(map[string]string{
		"manifests/widgets.crd.yaml": baseCRD + "apiversion: apiextensions.k8s.io/v1beta1\n"})},
	{name: "reject-crd-case-sensitive-fields", want: same, errHas: "no CustomResourceDefinition in manifests/ serves it", files: variant(map[string]string{
		"manifests/widgets.crd.yaml": strings.Replace(baseCRD, "\nspec:", "\nSpec:", 1)})},
	{name: "reject-crd-wrong-type", want: same, errHas: "decoding v1 CustomResourceDefinition", files: variant(map[string]string{
		"manifests/widgets.crd.yaml": strings.Replace(baseCRD, "minimum: 1,", "minimum: one,", 1)})},
	{name: "reject-non-string-annotation", want: same, errHas: "metadata", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("    capabilities: Basic Install\n", "    capabilities: Basic Install\n    replicas: 3\n")})},
	{name: "reject-bad-creation-timestamp", want: same, errHas: "metadata", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  name: demo.v1.2.3\n", "  name: demo.v1.2.3\n  creationTimestamp: yesterday\n")})},
	{name: "reject-csv-without-spec", want: same, errHas: "no spec", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: demo.v1.2.3}\n",
		"manifests/widgets.crd.yaml":                ""})},
	{name: "reject-bad-gvk-property", want: same, errHas: "metadata/properties.yaml: properties[0]: olm.gvk value", files: variant(map[string]string{
		"metadata/properties.yaml": "properties:\n- type: olm.gvk\n  value: widgets\n"})},
	{name: "reject-bad-package-dependency", want: same, errHas: "metadata/dependencies.yaml: dependencies[0]: olm.package value", files: variant(map[string]string{
		"metadata/dependencies.yaml": "dependencies:\n- type: olm.package\n  value: [etcd]\n"})},
	{name: "reject-related-images-not-a-list", want: same, errHas: "spec.relatedImages", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  - name: operand\n    image: quay.io/demo/operand:v1\n", "    operand: quay.io/demo/operand:v1\n")})},
	{name: "reject-required-crd-name", want: same, errHas: "is not plural.group", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("    - name: gadgets.other.example.com\n", "    - name: gadgets\n")})},
	{name: "reject-null-owned-crd", want: same, errHas: "owned[1] is null", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("      displayName: Widget\n", "      displayName: Widget\n    - null\n")})},
	{name: "reject-boolean-release", want: same, errHas: "spec.release", files: variant(map[string]string{
		"manifests/demo.clusterserviceversion.yaml": csvWith("  version: 1.2.3\n", "  version: 1.2.3\n  release: true\n")})},

	// opm renders these, silently dropping or mis-reading something; Render refuses them.
	{name: "strict-two-csvs", want: stricter, errHas: "a second ClusterServiceVersion", files: variant(map[string]string{
		"manifests/zz-old.clusterserviceversion.yaml": baseCSV})},
	{name: "strict-bad-yaml-manifest", want: stricter, errHas: "manifests/svc.yaml: line 3: invalid YAML", files: variant(map[string]string{
		"manifests/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata: name: x\n"})},
	{name: "strict-bad-json-manifest", want: stricter, errHas: "manifests/svc.json: line 2, column", files: variant(map[string]string{
		"manifests/svc.json": "{\"apiVersion\": \"v1\",\n \"kind\": \"Service\" \"metadata\": {}}"})},
	{name: "strict-manifest-without-kind", want: stricter, errHas: "manifests/svc.yaml: not a Kubernetes object: it has no kind", files: variant(map[string]string{
		"manifests/svc.yaml": "apiVersion: v1\nmetadata: {name: x}\n"})},
	{name: "strict-empty-first-document", want: stricter, errHas: "the first YAML document is empty", files: variant(map[string]string{
		"manifests/svc.yaml": "# Copyright header\n---\napiVersion: v1\nkind: Service\nmetadata: {name: x}\n"})},
	{name: "strict-double-separator", want: stricter, errHas: "manifests/svc.yaml: the first YAML document is empty", files: variant(map[string]string{
		"manifests/svc.yaml": "---\n---\napiVersion: v1\nkind: Service\nmetadata: {name: x}\n"})},
	{name: "strict-missing-package", want: stricter, errHas: "annotation operators.operatorframework.io.bundle.package.v1 is missing", files: variant(map[string]string{
		"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.channels.v1: stable\n"})},
	{name: "strict-bad-yaml-dependencies", want: stricter, errHas: "metadata/dependencies.yaml: line 2: invalid YAML", files: variant(map[string]string{
		"metadata/dependencies.yaml": "dependencies:\n- type: olm.package\n value: {packageName: etcd}\n"})},
}

// manyRelatedImages is a relatedImages list of 20 entries over 8 images, in an order no sort keeps.
func manyRelatedImages() string {
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "  - name: image-%02d\n    image: quay.io/demo/img-%d:v1\n", i, (i*5)%8)
	}
	return b.String()
}
