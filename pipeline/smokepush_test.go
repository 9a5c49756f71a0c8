package pipeline_test

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/catalogbot/catalogbot/checks/smoke"
	"github.com/catalogbot/catalogbot/internal/registrytest"
	"github.com/catalogbot/catalogbot/pipeline"
	"github.com/catalogbot/catalogbot/report"
)

// loopbackOnly lets requests to loopback hosts (the test's in-process registries) through and hands
// every other to next (which refuses).
type loopbackOnly struct{ next http.RoundTripper }

func (l loopbackOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if ip := net.ParseIP(req.URL.Hostname()); ip != nil && ip.IsLoopback() {
		return http.DefaultTransport.RoundTrip(req)
	}
	return l.next.RoundTrip(req)
}

// pulledText is the file contents of the catalog image at ref, pulled as catalogd would, concatenated.
func pulledText(ctx context.Context, ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", err
	}
	desc, err := remote.Get(r, remote.WithContext(ctx))
	if err != nil {
		return "", err
	}
	var img v1.Image
	if desc.MediaType.IsIndex() {
		idx, ierr := desc.ImageIndex()
		if ierr != nil {
			return "", ierr
		}
		m, ierr := idx.IndexManifest()
		if ierr != nil || len(m.Manifests) == 0 {
			return "", fmt.Errorf("%s: empty index: %v", ref, ierr)
		}
		img, err = idx.Image(m.Manifests[0].Digest)
	} else {
		img, err = desc.Image()
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		if _, err := tr.Next(); err == io.EOF {
			break
		} else if err != nil {
			return "", err
		}
		if _, err := io.Copy(&b, tr); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// smokeRegistry starts a registry for the test and returns a push target in it.
func smokeRegistry(t *testing.T, wrap func(http.Handler) http.Handler) (prefix string) {
	return registrytest.New(t, wrap).Host + "/catalogbot-smoke"
}

// counting counts the requests a registry receives.
func counting(n *atomic.Int64) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			h.ServeHTTP(w, r)
		})
	}
}

// An OLM v1 install gets the base and head catalog images pushed to the push target by digest: the
// runner is given those references (the same digests as OLM v0's locally built ones), and what they
// serve when pulled is the base's and the head's catalog.
func TestSmokeOLMv1PushesCatalogImages(t *testing.T) {
	base, head := smokeTrees(t, false, "  olm: both\n")
	f := newFakeSmoke(t)
	prefix := smokeRegistry(t, nil)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, Registry: prefix}, nil, 0), "smoke")
	if st.Status != report.Pass {
		t.Fatalf("smoke %s: %s %s %+v", st.Status, st.Summary, st.Err, st.Diagnostics)
	}
	if len(f.calls) != 8 {
		t.Fatalf("%d calls, want 8 (4 catalogs, v0 and v1)", len(f.calls))
	}
	digest := func(ref string) string { _, d, _ := strings.Cut(ref, "@"); return d }
	for i := 0; i < len(f.calls); i += 2 {
		v0, v1 := f.calls[i], f.calls[i+1]
		if v0.OLM == smoke.OLMv1 || v1.OLM != smoke.OLMv1 {
			t.Fatalf("calls %d, %d: OLMs %q, %q", i, i+1, v0.OLM, v1.OLM)
		}
		if !strings.HasPrefix(v0.CatalogImage, "catalogbot.local/smoke/catalog-head@sha256:") || v0.CatalogArchive == "" {
			t.Errorf("OLM v0 call %s: catalog %q archive %q: want the local image and its archive", v0.ClusterName, v0.CatalogImage, v0.CatalogArchive)
		}
		if v1.CatalogImage != prefix+"/catalog-head@"+digest(v0.CatalogImage) || v1.BaseCatalogImage != prefix+"/catalog-base@"+digest(v0.BaseCatalogImage) {
			t.Errorf("OLM v1 call %s: catalog %q base %q: want the pushed images of %q and %q", v1.ClusterName, v1.CatalogImage, v1.BaseCatalogImage, v0.CatalogImage, v0.BaseCatalogImage)
		}
	}
	for _, c := range []string{"v4.19", "v4.20", "v4.21", "v4.22"} {
		if !f.headHas[c] || f.baseHas[c] {
			t.Errorf("catalog %s: pulled head has the new bundle %v (want true), base %v (want false)", c, f.headHas[c], f.baseHas[c])
		}
	}
}

// OLM v1 without a push target fails at once, before any image is built or cluster created, saying
// what to set; so does a push target that names no registry. OLM v0 alone needs none.
func TestSmokeOLMv1NeedsRegistry(t *testing.T) {
	base, head := smokeTrees(t, false, "  olmByCatalog:\n    - clusterVersions: [v4.22]\n      olm: v1\n")
	for _, tc := range []struct{ registry, want string }{
		{"", "OLM v1 smoke installs (catalog v4.22) need a registry the cluster can pull the catalog images from"},
		{"catalogbot-smoke", `smoke registry "catalogbot-smoke" is not a repository prefix`},
		{"localhost:5001/Smoke", `smoke registry "localhost:5001/Smoke" is not a repository prefix`},
		{"localhost:5001/smoke@sha256", `smoke registry "localhost:5001/smoke@sha256" is not a repository prefix`},
	} {
		f := newFakeSmoke(t)
		st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, Registry: tc.registry}, nil, 0), "smoke")
		if st.Status != report.ActionRequired || !strings.Contains(st.Err, tc.want) || len(f.calls) != 0 {
			t.Errorf("registry %q: smoke %s %q, %d calls; want action_required with %q and no install", tc.registry, st.Status, st.Err, len(f.calls), tc.want)
		}
	}
	if st := stageOf(t, runSmoke(t, base, head, newFakeSmoke(t), pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke"); !strings.Contains(st.Err, "--smoke-registry") {
		t.Errorf("error %q does not say what to set", st.Err)
	}
	v0base, v0head := smokeTrees(t, false, "")
	if st := stageOf(t, runSmoke(t, v0base, v0head, newFakeSmoke(t), pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke"); st.Status != report.Pass {
		t.Errorf("OLM v0 without a registry: smoke %s %q", st.Status, st.Err)
	}
}

// The push target is the operator's: a pull request cannot choose where its catalog images are pushed
// (nor where the cluster pulls them from). A head .catalogbot.yaml naming another registry changes
// nothing: with the operator's target the images go there only, without one the stage refuses; and the
// base's configuration has no such setting (an unknown field makes it invalid, which blocks merging).
func TestSmokeRegistryNotFromTheRepository(t *testing.T) {
	var hostile atomic.Int64
	evil := smokeRegistry(t, counting(&hostile))
	base, head := smokeTrees(t, false, "  olm: v1\n")
	head.files[".catalogbot.yaml"] = strings.Replace(head.files[".catalogbot.yaml"], "  olm: v1\n", "  olm: v1\n  registry: "+evil+"\n", 1)
	if !strings.Contains(head.files[".catalogbot.yaml"], evil) {
		t.Fatal("head config unchanged")
	}
	prefix := smokeRegistry(t, nil)
	f := newFakeSmoke(t)
	st := stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, Registry: prefix}, nil, 0), "smoke")
	if st.Status != report.Pass || len(f.calls) != 4 {
		t.Fatalf("smoke %s %q, %d calls", st.Status, st.Err, len(f.calls))
	}
	for _, o := range f.calls {
		if !strings.HasPrefix(o.CatalogImage, prefix+"/") || !strings.HasPrefix(o.BaseCatalogImage, prefix+"/") {
			t.Errorf("call %s: catalog %q base %q, want them in %s", o.ClusterName, o.CatalogImage, o.BaseCatalogImage, prefix)
		}
	}
	f = newFakeSmoke(t)
	st = stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0), "smoke")
	if st.Status != report.ActionRequired || len(f.calls) != 0 {
		t.Errorf("without the operator's target: smoke %s %q, %d calls", st.Status, st.Err, len(f.calls))
	}
	badBase, badHead := smokeTrees(t, false, "  olm: v1\n  registry: "+evil+"\n")
	r := runSmoke(t, badBase, badHead, newFakeSmoke(t), pipeline.SmokeInput{NodeImages: nodeImages}, nil, 0)
	if st := stageOf(t, r, "config"); st.Status != report.ActionRequired || !strings.Contains(st.Err, `unknown field "registry" in smoke`) {
		t.Errorf("base config with smoke.registry: config %s %q", st.Status, st.Err)
	}
	if n := hostile.Load(); n != 0 {
		t.Errorf("the registry the repository named got %d requests", n)
	}
}

// The push uses the run's registry credentials (the keychain of the front-end: the docker config, the
// bot's per-repository logins); a registry that cannot be pushed to is an infrastructure error naming
// the push, with no install run.
func TestSmokeOLMv1PushCredentialsAndFailure(t *testing.T) {
	base, head := smokeTrees(t, false, "  olmByCatalog:\n    - clusterVersions: [v4.22]\n      olm: v1\n")
	auth := &registrytest.BasicAuth{User: "smoke-pusher", Password: "s3cret"}
	prefix := smokeRegistry(t, auth.Wrap)
	f := newFakeSmoke(t)
	keys := staticKeychain{authn.FromConfig(authn.AuthConfig{Username: auth.User, Password: auth.Password})}
	// the fake catalogd pulls anonymously: a registry needing credentials to pull is left to the cluster,
	// so the check here is what the push sent
	st := stageOf(t, runSmokeWith(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, Registry: prefix}, nil, 0, remote.WithAuthFromKeychain(keys)), "smoke")
	if !slices.Contains(auth.Users(), auth.User) {
		t.Errorf("the push never sent the keychain's credentials: users %q (smoke %s %q)", auth.Users(), st.Status, st.Err)
	}
	if strings.Contains(st.Err, auth.Password) || strings.Contains(st.Details, auth.Password) {
		t.Errorf("the password is in the report: %q", st.Err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	f = newFakeSmoke(t)
	st = stageOf(t, runSmoke(t, base, head, f, pipeline.SmokeInput{NodeImages: nodeImages, Registry: closed + "/catalogbot-smoke"}, nil, 0), "smoke")
	if st.Status != report.Error || !strings.Contains(st.Err, "push to the smoke registry (for OLM v1)") || !strings.Contains(st.Err, closed) || len(f.calls) != 0 {
		t.Errorf("unreachable registry: smoke %s %q, %d calls", st.Status, st.Err, len(f.calls))
	}
}

// staticKeychain resolves every registry to one authenticator.
type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }
