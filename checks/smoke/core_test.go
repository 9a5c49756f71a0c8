package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// fakeAPIServer is a hand-written stand-in for the few Kubernetes API paths dynCore, discoveryClient
// and serverApplier use; it records every request as "METHOD path?query".
type fakeAPIServer struct {
	mu        sync.Mutex
	requests  []string
	widgetsAt int // discovery of example.com/v1 answers 404 until this many requests of it were made
	gvReads   int
	created   map[string]bool
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path+queryOf(r))
	w.Header().Set("Content-Type", "application/json")
	write := func(code int, v any) {
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
	switch p := r.URL.Path; {
	case r.Method == "GET" && p == "/api/v1":
		write(200, metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{
			{Name: "namespaces", Kind: "Namespace"}, {Name: "pods/log", Kind: "Pod", Namespaced: true}, {Name: "pods", Kind: "Pod", Namespaced: true}}})
	case r.Method == "GET" && p == "/apis/example.com/v1":
		s.gvReads++
		if s.gvReads < s.widgetsAt {
			write(404, metav1.Status{Status: "Failure", Reason: metav1.StatusReasonNotFound, Code: 404})
			return
		}
		write(200, metav1.APIResourceList{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true}}})
	case r.Method == "PATCH":
		body, _ := io.ReadAll(r.Body)
		w.WriteHeader(200)
		w.Write(body)
	case r.Method == "GET" && p == "/api/v1/namespaces/ns/pods/p1/log":
		io.WriteString(w, "line 1\nline 2\n")
	case r.Method == "GET" && p == "/api/v1/namespaces/ns/pods":
		write(200, map[string]any{"apiVersion": "v1", "kind": "PodList", "items": []any{
			map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p1", "namespace": "ns"},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "img"}}}}}})
	case r.Method == "GET" && p == "/apis/apps/v1/deployments":
		write(200, map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList", "items": []any{
			map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "olm-operator", "namespace": "olm"}}}})
	case r.Method == "POST" && p == "/api/v1/namespaces/ns/pods":
		write(403, metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: "Failure", Reason: metav1.StatusReasonForbidden, Code: 403,
			Message: `pods "catalogbot-pod-security-probe" is forbidden: violates PodSecurity "restricted:latest": privileged`})
	case r.Method == "POST" && p == "/api/v1/namespaces":
		var u unstructured.Unstructured
		body, _ := io.ReadAll(r.Body)
		if err := u.UnmarshalJSON(body); err != nil || u.GetKind() != "Namespace" {
			write(400, metav1.Status{Status: "Failure", Message: fmt.Sprintf("bad namespace %q: %v", body, err), Code: 400})
			return
		}
		if s.created[u.GetName()] {
			write(409, metav1.Status{Status: "Failure", Reason: metav1.StatusReasonAlreadyExists, Code: 409})
			return
		}
		s.created[u.GetName()] = true
		w.WriteHeader(201)
		w.Write(body)
	default:
		write(404, metav1.Status{Status: "Failure", Reason: metav1.StatusReasonNotFound, Code: 404})
	}
}

// queryOf is r's query without the client's timeout (newClients sets one on every request).
func queryOf(r *http.Request) string {
	q := r.URL.Query()
	q.Del("timeout")
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

func newTestClients(t *testing.T, s *fakeAPIServer) *clients {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	kubeconfig := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, srv.URL)
	c, err := newClients([]byte(kubeconfig))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The product's clients (no typed clientset: see coreAPI) read and write what Run needs through the
// API server's REST paths.
func TestDynCoreSpeaksTheAPI(t *testing.T) {
	s := &fakeAPIServer{created: map[string]bool{}}
	c := newTestClients(t, s)
	ctx := context.Background()

	pods, err := c.core.listPods(ctx, "ns", metav1.ListOptions{LabelSelector: "a=b"})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "p1" || pods.Items[0].Spec.Containers[0].Image != "img" {
		t.Fatalf("listPods: %+v, %v", pods, err)
	}
	deps, err := c.core.listDeployments(ctx, metav1.NamespaceAll)
	if err != nil || len(deps.Items) != 1 || deps.Items[0].Namespace != "olm" {
		t.Fatalf("listDeployments: %+v, %v", deps, err)
	}
	lines, limit := int64(5), int64(100)
	rc, err := c.core.podLog(ctx, "ns", "p1", &corev1.PodLogOptions{Container: "c", TailLines: &lines, LimitBytes: &limit, Previous: true})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(rc)
	rc.Close()
	if string(text) != "line 1\nline 2\n" {
		t.Fatalf("podLog: %q", text)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "smoke-a", Labels: map[string]string{managedLabel: "true"}}}
	if err := c.core.createNamespace(ctx, ns); err != nil {
		t.Fatalf("createNamespace: %v", err)
	}
	if err := c.core.createNamespace(ctx, ns); !apierrors.IsAlreadyExists(err) {
		t.Fatalf("createNamespace again: %v, want AlreadyExists (ensureNamespace relies on it)", err)
	}
	if _, err := c.core.getNamespace(ctx, "missing"); !apierrors.IsNotFound(err) {
		t.Fatalf("getNamespace of a missing namespace: %v, want NotFound", err)
	}
	if err := c.core.dryRunPod(ctx, probePod("ns")); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), psaViolation) {
		t.Fatalf("dryRunPod: %v, want the admission's Forbidden (checkEnforced relies on it)", err)
	}
	want := []string{
		"GET /api/v1/namespaces/ns/pods?labelSelector=a%3Db",
		"GET /apis/apps/v1/deployments",
		"GET /api/v1/namespaces/ns/pods/p1/log?container=c&limitBytes=100&previous=true&tailLines=5",
		"POST /api/v1/namespaces?fieldManager=catalogbot-smoke",
		"POST /api/v1/namespaces?fieldManager=catalogbot-smoke",
		"GET /api/v1/namespaces/missing",
		"POST /api/v1/namespaces/ns/pods?dryRun=All&fieldManager=catalogbot-smoke",
	}
	if got := strings.Join(s.requests, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// Apply finds each kind's resource and scope by discovery: a namespaced object without a namespace
// goes to default, a cluster-scoped one has none, a subresource (pods/log) is never picked, and a kind
// whose group version is served only after a CRD was applied is found by reading discovery again.
func TestServerApplierDiscovers(t *testing.T) {
	s := &fakeAPIServer{created: map[string]bool{}, widgetsAt: 2}
	c := newTestClients(t, s)
	objs, err := decodeManifests([]byte(`apiVersion: v1
kind: Namespace
metadata: {name: olm}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: olm}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.apply.Apply(context.Background(), objs); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /api/v1",
		"PATCH /api/v1/namespaces/olm?fieldManager=catalogbot-smoke&force=true",
		"PATCH /api/v1/namespaces/default/pods/p?fieldManager=catalogbot-smoke&force=true",
		"GET /apis/example.com/v1",
		"GET /apis/example.com/v1",
		"PATCH /apis/example.com/v1/namespaces/olm/widgets/w?fieldManager=catalogbot-smoke&force=true",
	}
	if got := strings.Join(s.requests, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	gadget, _ := decodeManifests([]byte("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g}\n"))
	if err := c.apply.Apply(context.Background(), gadget); err == nil || !strings.Contains(err.Error(), "no resource of kind Gadget in example.com/v1") {
		t.Fatalf("applying a kind the server does not serve: %v", err)
	}
}
