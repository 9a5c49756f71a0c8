package pipeline_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/build/bundleimage"
	"github.com/catalogbot/catalogbot/diag"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/internal/shareddata"
	"github.com/catalogbot/catalogbot/registry"
	renderbundle "github.com/catalogbot/catalogbot/render/bundle"
	"github.com/catalogbot/catalogbot/report"
)

// onlyHost sends requests to host through the default transport and refuses every other (the shared
// bundle's related images name real registries this test does not reach).
type onlyHost struct{ host string }

func (o onlyHost) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != o.host {
		return nil, errors.New("no registry but the test's: " + req.URL.String())
	}
	return http.DefaultTransport.RoundTrip(req)
}

// A catalog in olm.csv.metadata form holds no webhook definitions and no objects for
// operator-framework's validators: with policy.bundleImages the pipeline reads the touched bundle's
// objects from its image (a real registry), so kube-green's webhook is reported as the olm.bundle.object
// form would report it. A registry that fails is the stage's infrastructure error naming the image,
// never a pass.
func TestPolicyStageReadsObjectsFromBundleImages(t *testing.T) {
	var down atomic.Bool
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if down.Load() && r.URL.Path != "/v2/" {
				http.Error(w, "registry down", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	image, bundle, run := csvMetadataBundleOn(t, reg.Host, onlyHost{reg.Host})
	rules := func(st report.Stage) []string {
		var out []string
		for _, d := range st.Diagnostics {
			if d.Bundle == bundle && d.File == kubeGreenFile && d.Line > 0 {
				out = append(out, d.Rule)
			}
		}
		return out
	}

	st := run(false)
	if slices.Contains(rules(st), "olmv1-webhooks") || slices.ContainsFunc(rules(st), func(r string) bool { return strings.HasPrefix(r, "policy-of-") }) {
		t.Fatalf("without bundleImages the catalog's csv-metadata is all there is: %s %v", st.Summary, st.Diagnostics)
	}
	st = run(true)
	if !slices.Contains(rules(st), "olmv1-webhooks") || !slices.Contains(rules(st), "policy-of-csv") ||
		!strings.Contains(st.Summary, "the objects of 1 bundle read from their images") {
		t.Fatalf("with bundleImages: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}

	down.Store(true)
	st = run(true)
	if st.Status != report.Error || !strings.Contains(st.Err, image) || !strings.Contains(st.Err, bundle) {
		t.Fatalf("registry down: %s %q %v", st.Status, st.Err, st.Diagnostics)
	}
}

const kubeGreenFile = "catalog/kube-green/catalog.json"

// csvMetadataBundleOn pushes kube-green 0.7.0's bundle image to the registry at host and returns it, its
// bundle's name, and run: the pull-request pipeline's policy stage on a change to a catalog holding that
// bundle in olm.csv.metadata form only (policy.bundleImages as given), its registry requests through rt.
func csvMetadataBundleOn(t *testing.T, host string, rt http.RoundTripper) (image, bundle string, run func(images bool) report.Stage) {
	t.Helper()
	image, bundle, cat := csvMetadataCatalog(t, host)
	return image, bundle, func(images bool) report.Stage {
		// the change adds the bundle: findings the base already had would be the base's (baseline)
		base := tree{files: map[string]string{".catalogbot.yaml": imagesPolicyConfig(images)}}
		return stageOf(t, runMulti(t, base, base.with(map[string]string{kubeGreenFile: cat}), remote.WithTransport(rt)), "policy")
	}
}

// imagesPolicyConfig is a configuration with the community and olmv1 presets, reading bundle images when images.
func imagesPolicyConfig(images bool) string {
	c := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [catalog-admin]\npolicy:\n  presets: [community, olmv1]\n"
	if images {
		c += "  bundleImages: true\n"
	}
	return c
}

// csvMetadataCatalog pushes kube-green 0.7.0's bundle image to the registry at host and returns it, its
// bundle's name, and a catalog file holding that bundle in olm.csv.metadata form only.
func csvMetadataCatalog(t *testing.T, host string) (image, bundle, cat string) {
	t.Helper()
	// the bundle without its minKubeVersion, which operator-framework's csv and operatorhubv2 validators
	// report (kube-green 0.7.0 passes them all): what shows the validators read the image's objects
	dir := filepath.Join(t.TempDir(), "kube-green")
	if err := os.CopyFS(dir, os.DirFS(shareddata.Dir(t, "bundles", "kube-green", "0.7.0"))); err != nil {
		t.Fatal(err)
	}
	csvFile := filepath.Join(dir, "manifests", "kube-green.clusterserviceversion.yaml")
	csv, err := os.ReadFile(csvFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(csvFile, []byte(strings.Replace(string(csv), "  minKubeVersion: 1.27.0\n", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	image = host + "/ops/kube-green-bundle:v0.7.0"
	img, err := bundleimage.Build(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(mustTag(t, image), img); err != nil {
		t.Fatal(err)
	}
	b, err := renderbundle.RenderDir(context.Background(), dir, image)
	if err != nil {
		t.Fatal(err)
	}
	if b, err = renderbundle.ToCSVMetadata(b); err != nil {
		t.Fatal(err)
	}
	blob, err := renderbundle.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	cat = `{"schema": "olm.package", "name": "kube-green", "defaultChannel": "alpha"}
{"schema": "olm.channel", "name": "alpha", "package": "kube-green", "entries": [{"name": "` + b.Name + `"}]}
` + string(blob)
	return image, b.Name, cat
}

// A pull request cannot switch the policy off for itself: its own .catalogbot.yaml dropping the presets
// and policy.bundleImages changes nothing; the base branch's configuration decides, so the bundle's
// objects are still read from its image and operator-framework's validators still report.
func TestAttackPolicySwitchedOffByTheChange(t *testing.T) {
	reg := registrytest.New(t, nil)
	_, bundle, cat := csvMetadataCatalog(t, reg.Host)
	base := tree{files: map[string]string{".catalogbot.yaml": imagesPolicyConfig(true)}}
	head := base.with(map[string]string{kubeGreenFile: cat,
		".catalogbot.yaml": "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [catalog-admin]\npolicy:\n  presets: []\n"})
	st := stageOf(t, runMulti(t, base, head, remote.WithTransport(onlyHost{reg.Host})), "policy")
	found := slices.ContainsFunc(st.Diagnostics, func(d diag.Diagnostic) bool {
		return d.Bundle == bundle && d.Rule == "policy-of-csv"
	})
	if !found || !strings.Contains(st.Summary, "the objects of 1 bundle read from their images") {
		t.Fatalf("the change's configuration loosened the policy: %s %s %v", st.Status, st.Summary, st.Diagnostics)
	}
}

// onlyHostVia is onlyHost sending through next.
type onlyHostVia struct {
	host string
	next http.RoundTripper
}

func (o onlyHostVia) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != o.host {
		return nil, errors.New("no registry but the test's: " + req.URL.String())
	}
	return o.next.RoundTrip(req)
}

// A registry that accepts the connection and never answers (a tarpit named by the pull request's bundle
// image) cannot hold the policy stage's image reads: the wait for an answer's headers is bounded
// (registry.ResponseHeaderTimeout, short here), a timeout is not retried, and the stage is an
// infrastructure error naming the image, never a pass.
func TestAttackPolicyImageTarpitIsBounded(t *testing.T) {
	var tarpit atomic.Bool
	release := make(chan struct{})
	reg := registrytest.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tarpit.Load() && r.URL.Path != "/v2/" {
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	t.Cleanup(func() { close(release) })
	image, _, run := csvMetadataBundleOn(t, reg.Host, onlyHostVia{reg.Host, registry.JobTransport(0, 300*time.Millisecond, nil)})
	tarpit.Store(true)
	start := time.Now()
	st := run(true)
	if took := time.Since(start); st.Status != report.Error || !strings.Contains(st.Err, image) || !strings.Contains(st.Err, "did not start answering") || took > 30*time.Second {
		t.Fatalf("tarpit registry: %s %q after %s", st.Status, st.Err, took)
	}
}

// Dependencies are looked up in the whole head catalog, which the validate stage loaded: the touched
// rabbitmq-messaging-topology-operator requires rabbitmq-cluster-operator, which the change does not
// touch (real v4.20 packages). Without that package in the catalog, the requirement is unsatisfied.
func TestPolicyStageLooksDependenciesUpInTheWholeHeadCatalog(t *testing.T) {
	src := shareddata.Dir(t, "catalogs", "community-operators-prod-v4.20")
	read := func(pkg string) string {
		data, err := os.ReadFile(filepath.Join(src, pkg, "catalog.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	const topology, cluster = "catalog/rabbitmq-messaging-topology-operator/catalog.yaml", "catalog/rabbitmq-cluster-operator/catalog.yaml"
	cfg := "apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [catalog-admin]\ncatalog: {format: yaml}\npolicy: {presets: [community]}\n"
	var requests atomic.Int64
	for _, withCluster := range []bool{true, false} {
		base := tree{files: map[string]string{".catalogbot.yaml": cfg}}
		if withCluster {
			base.files[cluster] = read("rabbitmq-cluster-operator")
		}
		// the change adds the package (a requirement the base already had unmet would be the base's)
		st := stageOf(t, runMulti(t, base, base.with(map[string]string{topology: read("rabbitmq-messaging-topology-operator")}), remote.WithTransport(refusingTransport{&requests})), "policy")
		unsatisfied := slices.ContainsFunc(st.Diagnostics, func(d diag.Diagnostic) bool {
			return d.Rule == "policy-dependency-unsatisfied" && strings.Contains(d.Message, "rabbitmq-cluster-operator")
		})
		if unsatisfied == withCluster {
			t.Fatalf("rabbitmq-cluster-operator in the catalog: %v; policy: %s %s %v", withCluster, st.Status, st.Summary, st.Diagnostics)
		}
	}
}
