//go:build e2e

package smoke

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/diag"
)

// laneOLMv1 is olmv1.json (hack/kind-offline/build-olmv1.sh): OLM v1's install directory and the images
// it runs (catalogd, operator-controller, the in-cluster registry).
type laneOLMv1 struct {
	Version       string   `json:"version"`
	Manifests     string   `json:"manifests"`
	ImageArchives []string `json:"imageArchives"`
}

// The lane's in-cluster registry (hack/kind-offline/cmd/imagetool/olmv1manifests.go): its manifests in
// the install directory, the NodePort the host pushes through and the prefix the controllers' registries.conf
// maps to it.
const (
	registryManifests = "20-registry.yaml"
	registryNodePort  = 30500
	laneImagePrefix   = "catalogbot.local/"
)

func loadOLMv1(t *testing.T, l lane) laneOLMv1 {
	t.Helper()
	if l.OLMv1 == "" {
		t.Fatal("lane description has no olmv1 entry: rebuild the cache (lane.sh build-cache)")
	}
	var v laneOLMv1
	readJSON(t, l.OLMv1, &v)
	if v.Manifests == "" || len(v.ImageArchives) == 0 {
		t.Fatalf("%s: no manifests or image archives", l.OLMv1)
	}
	return v
}

// kubeClient is what the OLM v1 pass talks to the lane's cluster with.
type kubeClient struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func connectKind(t *testing.T, clusterName string) *kubeClient {
	t.Helper()
	kc, err := cluster.NewProvider().KubeConfig(clusterName, false)
	if err != nil {
		t.Fatalf("kubeconfig of %s: %v", clusterName, err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig([]byte(kc))
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &kubeClient{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
}

// applyFile server-side-applies every object of a YAML file.
func (k *kubeClient) applyFile(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		if len(m) == 0 {
			continue
		}
		if err := k.apply(ctx, &unstructured.Unstructured{Object: m}); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

func (k *kubeClient) resource(u *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := u.GroupVersionKind()
	m, err := k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		k.mapper.Reset()
		if m, err = k.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			return nil, fmt.Errorf("%s %s: %w", gvk.Kind, u.GetName(), err)
		}
	}
	if m.Scope.Name() == "namespace" {
		return k.dyn.Resource(m.Resource).Namespace(u.GetNamespace()), nil
	}
	return k.dyn.Resource(m.Resource), nil
}

func (k *kubeClient) apply(ctx context.Context, u *unstructured.Unstructured) error {
	ri, err := k.resource(u)
	if err != nil {
		return err
	}
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	force := true
	if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: "catalogbot-lane", Force: &force}); err != nil {
		return fmt.Errorf("applying %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

func (k *kubeClient) get(ctx context.Context, gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	if ns != "" {
		return k.dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return k.dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
}

var (
	gvrDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrCRD        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// deleteAndWait deletes a cluster-scoped object and waits until it is gone (absent already is fine).
func (k *kubeClient) deleteAndWait(ctx context.Context, gvr schema.GroupVersionResource, name string) error {
	err := k.dyn.Resource(gvr).Delete(ctx, name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s: %w", gvr.Resource, name, err)
	}
	return waitFor(ctx, time.Minute, "deleting "+gvr.Resource+" "+name, func(ctx context.Context) (bool, string) {
		_, err := k.get(ctx, gvr, "", name)
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		return false, fmt.Sprintf("still there (%v)", err)
	})
}

// waitFor polls check every 2 s until it answers done or the timeout passes; the error says the last state.
func waitFor(ctx context.Context, timeout time.Duration, what string, check func(ctx context.Context) (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		done, state := check(ctx)
		if done {
			return nil
		}
		last = state
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not done after %s (last: %s)", what, timeout, last)
		case <-time.After(2 * time.Second):
		}
	}
}

// condition returns the status, reason and message of a condition in status.conditions.
func condition(u *unstructured.Unstructured, typ string) (status, reason, message string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, x := range conds {
		c, _ := x.(map[string]any)
		if c["type"] == typ {
			s, _ := c["status"].(string)
			r, _ := c["reason"].(string)
			m, _ := c["message"].(string)
			return s, r, m
		}
	}
	return "", "", ""
}

func (k *kubeClient) waitDeploymentAvailable(ctx context.Context, ns, name string, timeout time.Duration) error {
	return waitFor(ctx, timeout, "Deployment "+ns+"/"+name+" Available", func(ctx context.Context) (bool, string) {
		u, err := k.get(ctx, gvrDeployment, ns, name)
		if err != nil {
			return false, err.Error()
		}
		s, r, m := condition(u, "Available")
		return s == "True", fmt.Sprintf("Available=%s %s %s", s, r, m)
	})
}

// startLaneRegistry loads the registry's image into the nodes, applies its manifests from the OLM v1
// install directory, waits for it and returns the address the host pushes to: the node container's IP
// and the Service's NodePort (the lane's egress guard only stops traffic leaving the docker network).
func startLaneRegistry(ctx context.Context, t *testing.T, k *kubeClient, clusterName string, v laneOLMv1) string {
	t.Helper()
	p := cluster.NewProvider()
	ns, err := p.ListInternalNodes(clusterName)
	if err != nil || len(ns) == 0 {
		t.Fatalf("nodes of %s: %v (%d)", clusterName, err, len(ns))
	}
	for _, a := range v.ImageArchives {
		if filepath.Base(a) != "registry.tar" {
			continue
		}
		for _, n := range ns {
			f, err := os.Open(a)
			if err != nil {
				t.Fatal(err)
			}
			err = nodeutils.LoadImageArchive(n, f)
			f.Close()
			if err != nil {
				t.Fatalf("loading %s into %s: %v", a, n, err)
			}
		}
	}
	if err := k.applyFile(ctx, filepath.Join(v.Manifests, registryManifests)); err != nil {
		t.Fatal(err)
	}
	if err := k.waitDeploymentAvailable(ctx, "catalogbot-registry", "registry", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	ip, _, err := ns[0].IP()
	if err != nil {
		t.Fatalf("IP of node %s: %v", ns[0], err)
	}
	host := fmt.Sprintf("%s:%d", ip, registryNodePort)
	// The Deployment can be Available before kube-proxy has programmed the NodePort.
	if err := waitFor(ctx, time.Minute, "the lane's registry through "+host, func(ctx context.Context) (bool, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/v2/", nil)
		if err != nil {
			return false, err.Error()
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, resp.Status
	}); err != nil {
		t.Fatal(err)
	}
	return host
}

// pushToLaneRegistry pushes the image of an OCI layout (one image, as imagetool writes them) to the lane's
// registry under ref's repository with the catalogbot.local prefix swapped for host, by digest and, when
// ref has a tag, by that tag too. The digest must stay what the catalogs reference.
func pushToLaneRegistry(ctx context.Context, host, ref, layoutDir string) error {
	idx, err := layout.ImageIndexFromPath(layoutDir)
	if err != nil {
		return fmt.Errorf("layout %s: %w", layoutDir, err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		return fmt.Errorf("layout %s: want one image (%v)", layoutDir, err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		return fmt.Errorf("layout %s: %w", layoutDir, err)
	}
	if !strings.HasPrefix(ref, laneImagePrefix) {
		return fmt.Errorf("%s: not under %s, which the controllers' registries.conf maps to the lane's registry", ref, laneImagePrefix)
	}
	repo, tag := ref, ""
	if i := strings.Index(repo, "@"); i >= 0 {
		repo = repo[:i]
	} else if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo, tag = repo[:i], repo[i+1:]
	}
	target := host + "/" + strings.TrimPrefix(repo, laneImagePrefix)
	dests := []string{target + "@" + im.Manifests[0].Digest.String()}
	if tag != "" {
		dests = append(dests, target+":"+tag)
	}
	for _, d := range dests {
		r, err := name.ParseReference(d, name.Insecure)
		if err != nil {
			return err
		}
		if err := remote.Write(r, img, remote.WithContext(ctx)); err != nil {
			return fmt.Errorf("pushing %s: %w", d, err)
		}
	}
	return checkPushed(ctx, target, im.Manifests[0].Digest)
}

func checkPushed(ctx context.Context, target string, want v1.Hash) error {
	r, err := name.ParseReference(target+"@"+want.String(), name.Insecure)
	if err != nil {
		return err
	}
	d, err := remote.Head(r, remote.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%s after the push: %w", r, err)
	}
	if d.Digest != want {
		return fmt.Errorf("%s: registry answers digest %s", r, d.Digest)
	}
	return nil
}

// prepareOLMv1 readies the lane's cluster for OLM v1: the in-cluster registry runs and holds the
// catalogs (base and head) and every bundle image the lane loads, under their names and digests.
func prepareOLMv1(ctx context.Context, t *testing.T, l lane, v laneOLMv1, bundles []laneBundle, clusterName string) *kubeClient {
	t.Helper()
	k := connectKind(t, clusterName)
	host := startLaneRegistry(ctx, t, k, clusterName, v)
	start := time.Now()
	for _, c := range []string{"base", "head"} {
		lc := l.Catalogs[c]
		if err := pushToLaneRegistry(ctx, host, lc.Image, strings.TrimSuffix(lc.Archive, ".tar")); err != nil {
			t.Fatalf("catalog %s: %v", c, err)
		}
	}
	n := 0
	for _, b := range bundles {
		if !b.Loaded {
			continue // unpullable on purpose
		}
		if err := pushToLaneRegistry(ctx, host, b.Image, strings.TrimSuffix(b.Archive, ".tar")); err != nil {
			t.Fatalf("bundle %s: %v", b.Bundle, err)
		}
		n++
	}
	t.Logf("pushed 2 catalogs and %d bundle images to the lane's registry at %s in %s", n, host, time.Since(start).Round(time.Millisecond))
	return k
}

// TestOLMv1InKind runs the OLM v1 pass against a kind cluster that exists already, named by
// CATALOGBOT_OLMV1_CLUSTER (one TestSmokeInKind kept with CATALOGBOT_SMOKE_KEEP=1): for working on
// the pass without repeating the OLM v0 ones. TestSmokeInKind runs the same pass in its own cluster.
func TestOLMv1InKind(t *testing.T) {
	clusterName := os.Getenv("CATALOGBOT_OLMV1_CLUSTER")
	if clusterName == "" {
		t.Skip("CATALOGBOT_OLMV1_CLUSTER is unset: the OLM v1 pass runs inside TestSmokeInKind")
	}
	l := loadLane(t)
	var bundles []laneBundle
	readJSON(t, l.Bundles, &bundles)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	testOLMv1(ctx, t, l, bundles, clusterName)
}

// testOLMv1 is the OLM v1 pass (smoke.Run with OLM "v1") on the csv-metadata catalogs, next to OLM v0's:
// the lane's registry serves the catalogs and bundle images under their names, Run installs OLM v1 from
// the lane's directory when the cluster lacks it, serves the base catalog from a ClusterCatalog, installs
// smoke-good at the base's version, switches the ClusterCatalog to the head and the version to the
// head's, and installs the others fresh. smoke-broken must fail although OLM v1 reports it Installed
// (its operator crash-loops), smoke-ownns (OwnNamespace only) and smoke-needsdep (requires an API no
// bundle provides) with OLM v1's reasons, and smoke-hostile (a privileged pod mounting the node's /)
// with Pod Security Admission's.
func testOLMv1(ctx context.Context, t *testing.T, l lane, bundles []laneBundle, clusterName string) {
	v := loadOLMv1(t, l)
	k := prepareOLMv1(ctx, t, l, v, bundles, clusterName)
	base, head := l.Catalogs["base"], l.Catalogs["head"]
	pkgs := []string{good, fresh, broken, ownNS, needsDep, hostile}
	// OLM v0's passes leave the packages' CRDs (cluster-scoped; its cleanup deletes namespaces and the
	// CatalogSource), and OLM v1 refuses to take over objects another installer made.
	for _, p := range pkgs {
		if err := k.deleteAndWait(ctx, gvrCRD, "widgets."+p+".catalogbot.io"); err != nil {
			t.Fatal(err)
		}
	}
	archives := slices.Clone(v.ImageArchives)
	for _, a := range l.ImageArchives {
		if filepath.Base(a) == "test-operator.tar" { // the operand: kubelet pulls it, as with OLM v0
			archives = append(archives, a)
		}
	}
	plan := smoke.PlanChange(loadCatalog(t, base.FBC), loadCatalog(t, head.FBC), pkgs, nil)
	if plan.BaseVersions[good] != "0.1.0" || plan.Versions[good] != "0.2.0" {
		t.Fatalf("plan versions = %v, base %v; want smoke-good 0.1.0 -> 0.2.0", plan.Versions, plan.BaseVersions)
	}
	start := time.Now()
	res, err := smoke.Run(ctx, smoke.Options{
		OLM: smoke.OLMv1, OLMv1ManifestsDir: v.Manifests, ClusterName: clusterName,
		CatalogImage: head.ref(), BaseCatalogImage: base.ref(), ImageArchives: archives,
		Packages: plan.Packages, FromBase: plan.FromBase, Expect: plan.Expect,
		Versions: plan.Versions, BaseVersions: plan.BaseVersions,
		Timeout: 5 * time.Minute, Parallel: len(pkgs), CrashLoopRestarts: 2, Progress: os.Stderr,
	})
	t.Logf("smoke.Run (OLM v1) took %s", time.Since(start).Round(time.Second))
	logResult(t, res)
	if !errors.Is(err, smoke.ErrPackagesFailed) || diag.CategoryOf(err) != diag.Invalid {
		t.Fatalf("Run error = %v (category %v); want smoke-broken, smoke-ownns, smoke-needsdep and smoke-hostile to fail and nothing else", err, diag.CategoryOf(err))
	}
	if res.OLM != smoke.OLMv1 || res.ClusterCatalog == "" {
		t.Errorf("result olm=%q clusterCatalog=%q; want v1 and the ClusterCatalog", res.OLM, res.ClusterCatalog)
	}
	by := byPackage(res)
	if p := by[good]; !p.Succeeded || !p.FromBase || p.Version != "0.2.0" || p.Bundle != good+".v0.2.0" || p.UpgradedFrom != good+".v0.1.0" || p.OLM != smoke.OLMv1 {
		t.Errorf("%s: %+v; want OLM v1 to install v0.1.0 from the base and upgrade it to v0.2.0", good, p)
	}
	if p := by[fresh]; !p.Succeeded || p.FromBase || p.Bundle != fresh+".v0.1.0" {
		t.Errorf("%s: %+v; want a fresh OLM v1 install of v0.1.0", fresh, p)
	}
	requireFailureIn(t, by[broken], []string{"crash-loop", "deployment-unavailable"}, broken+".v0.1.0",
		"FATAL: SMOKE_CRASH=1: this build crashes on purpose")
	requireFailureIn(t, by[ownNS], []string{"install-blocked", "install-failed"}, ownNS+".v0.1.0",
		"unsupported bundle: bundle does not support AllNamespaces install mode")
	requireFailureIn(t, by[needsDep], []string{"install-blocked", "install-failed"}, needsDep+".v0.1.0",
		`has a dependency declared via property "olm.gvk.required" which is currently not supported`)
	requirePodSecurityRefused(t, by[hostile], clusterName)
}

// requireFailureIn is requireFailure with any of rules as the lead diagnostic's rule.
func requireFailureIn(t *testing.T, p smoke.PackageResult, rules []string, bundle string, wants ...string) {
	t.Helper()
	if len(p.Diagnostics) > 0 && slices.Contains(rules, p.Diagnostics[0].Rule) {
		requireFailure(t, p, p.Diagnostics[0].Rule, bundle, wants...)
		return
	}
	requireFailure(t, p, rules[0], bundle, wants...)
}
