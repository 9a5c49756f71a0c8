package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/catalogbot/catalogbot/diag"
)

// Objects are read from the images of the checked packages' bundles only, and only of those whose
// catalog entry holds none; a failed read names the bundle and the image and fails the run.
func TestObjectsReadFromImagesOfCheckedBundlesOnly(t *testing.T) {
	c := load(t, "community-operators-prod-v4.20", "coherence-operator", "koku-metrics-operator")
	var mu sync.Mutex
	read := map[string]bool{}
	webhookCSV := []byte(`{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "x"},
		"spec": {"installModes": [{"type": "AllNamespaces", "supported": true}], "webhookdefinitions": [{"type": "ValidatingAdmissionWebhook"}]}}`)
	in := Input{Catalog: c, Packages: map[string]bool{"koku-metrics-operator": true},
		ImageObjects: func(_ context.Context, image string) ([][]byte, error) {
			mu.Lock()
			defer mu.Unlock()
			read[image] = true
			return [][]byte{webhookCSV}, nil
		}}
	res, err := Run(context.Background(), in, Severities{ruleV1Webhooks: diag.Warning})
	if err != nil {
		t.Fatal(err)
	}
	koku := 0
	for _, b := range c.Bundles {
		if b.Package == "koku-metrics-operator" {
			koku++
			if !read[b.Image] {
				t.Errorf("bundle %s: image %s not read", b.Name, b.Image)
			}
		} else if read[b.Image] {
			t.Errorf("bundle %s of an unchecked package: image read", b.Name)
		}
	}
	if res.FromImages != koku || len(res.Diagnostics) != koku {
		t.Fatalf("%d of %d bundles read, %d findings", res.FromImages, koku, len(res.Diagnostics))
	}

	in.ImageObjects = func(context.Context, string) ([][]byte, error) { return nil, errors.New("503 Service Unavailable") }
	_, err = Run(context.Background(), in, Severities{ruleV1Webhooks: diag.Warning})
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "from image ") {
		t.Fatalf("registry outage: %v", err)
	}
	if _, err := Run(context.Background(), in, Severities{ruleLoop: diag.Error}); err != nil {
		t.Fatalf("no rule needs the objects, so no image is read: %v", err)
	}
}
