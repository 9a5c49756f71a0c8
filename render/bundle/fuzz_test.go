package bundle

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRender renders a bundle whose CSV is the fuzzed content: Render must not panic, and whatever it
// renders must marshal to JSON that holds the CSV's name.
func FuzzRender(f *testing.F) {
	f.Add([]byte(baseCSV))
	f.Add([]byte(csvWith("  version: 1.2.3\n", "  version: 1.2.3\n  release: 2.5\n")))
	f.Add([]byte(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"x"},"spec":{"customresourcedefinitions":{"owned":[null]}}}`))
	f.Add([]byte("kind: ClusterServiceVersion\nmetadata: {name: a, annotations: {olm.properties: '[{\"type\":\"olm.gvk\",\"value\":1}]'}}\nspec: {}\n"))
	f.Add([]byte("kind: ClusterServiceVersion\nspec:\n  install: {strategy: deployment, spec: {deployments: [{spec: {replicas: x}}]}}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	// One small real CSV; big seeds make the fuzzer spend its time minimizing.
	if data, err := os.ReadFile(filepath.Join(sharedData(f, "bundles"), "hawtio-operator", "1.1.0", "manifests", "hawtio-operator.clusterserviceversion.yaml")); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, csv []byte) {
		fsys := mapFS(map[string]string{
			"manifests/csv.yaml":        string(csv),
			"manifests/crd.yaml":        baseCRD,
			"metadata/annotations.yaml": baseAnnotations,
		})
		for _, opts := range []Options{{}, {CSVMetadata: true}} {
			b, err := opts.Render(context.Background(), fsys, testImage)
			if err != nil {
				continue
			}
			out, err := Marshal(b)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			var v map[string]any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatalf("Marshal wrote invalid JSON: %v", err)
			}
			if v["name"] != nil && v["name"] != b.Name {
				t.Fatalf("name %v, want %q", v["name"], b.Name)
			}
		}
	})
}
