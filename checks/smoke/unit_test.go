package smoke

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/catalogbot/catalogbot/catalog"
	"github.com/catalogbot/catalogbot/diag"
)

func TestOptionsValidate(t *testing.T) {
	ok := Options{KubeconfigPath: "k", CatalogImage: testDigest, Packages: []string{"a"}}
	if err := ok.withDefaults().validate(); err != nil {
		t.Fatalf("valid options rejected: %v", err)
	}
	requireRefused(t, ok, map[string]optionsCase{
		"tag":         {func(o *Options) { o.CatalogImage = "quay.io/x/catalog:v1" }, "not referenced by digest"},
		"no cluster":  {func(o *Options) { o.KubeconfigPath = "" }, "no cluster"},
		"no packages": {func(o *Options) { o.Packages = nil }, "no packages"},
		"duplicate":   {func(o *Options) { o.Packages = []string{"a", "a"} }, `package "a" listed twice`},
		"upgrade":     {func(o *Options) { o.Upgrade = map[string]string{"b": "b.v1"} }, `package "b", which is not in the package list`},
		"mode":        {func(o *Options) { o.InstallModes = map[string][]string{"a": {"Everywhere"}} }, `unknown install mode "Everywhere"`},
		"archive":     {func(o *Options) { o.CatalogArchive = "c.tar" }, "only be loaded into a kind cluster"},
	})
	d := Options{CreateCluster: true}.withDefaults()
	if d.ClusterName != DefaultClusterName || d.Parallel != 2 || d.Timeout <= 0 || d.CrashLoopRestarts != 3 || d.Progress == nil {
		t.Errorf("defaults = %+v", d)
	}
}

func TestPlanGroup(t *testing.T) {
	for _, tc := range []struct {
		modes   []string
		mode    string
		targets []string
		extra   []string
	}{
		{nil, "AllNamespaces", nil, nil},
		{[]string{"OwnNamespace", "AllNamespaces"}, "AllNamespaces", nil, nil},
		{[]string{"SingleNamespace", "OwnNamespace"}, "OwnNamespace", []string{"ns"}, nil},
		{[]string{"SingleNamespace"}, "SingleNamespace", []string{"ns-target"}, []string{"ns-target"}},
		{[]string{"MultiNamespace"}, "MultiNamespace", []string{"ns", "ns-target"}, []string{"ns-target"}},
	} {
		p, err := planGroup("ns", tc.modes)
		if err != nil || p.Mode != tc.mode || !slices.Equal(p.Targets, tc.targets) || !slices.Equal(p.Extra, tc.extra) {
			t.Errorf("planGroup(%v) = %+v, %v", tc.modes, p, err)
		}
		og := operatorGroup("ns", p)
		targets, _ := og.Object["spec"].(map[string]any)["targetNamespaces"].([]any)
		if len(targets) != len(tc.targets) {
			t.Errorf("OperatorGroup targets = %v, want %v", targets, tc.targets)
		}
	}
	if _, err := planGroup("ns", []string{}); err != nil {
		t.Errorf("empty (unknown) modes: %v", err)
	}
}

func TestNamespaceFor(t *testing.T) {
	if got := NamespaceFor("My_Operator.io"); got != "smoke-my-operator-io" {
		t.Errorf("NamespaceFor = %q", got)
	}
	long := NamespaceFor(strings.Repeat("a", 100))
	if len(long)+len("-target") > 63 {
		t.Errorf("namespace %q too long for its -target sibling", long)
	}
}

func TestDigestTags(t *testing.T) {
	ls := `REF                                                TYPE                                       DIGEST                                                                  SIZE     PLATFORMS   LABELS
catalogbot.local/smoke/catalog:v1                  application/vnd.oci.image.manifest.v1+json sha256:aaaa 10.0 MiB linux/amd64 -
catalogbot.local/smoke/catalog@sha256:aaaa         application/vnd.oci.image.manifest.v1+json sha256:aaaa 10.0 MiB linux/amd64 -
localhost:5000/op:v2                               application/vnd.oci.image.manifest.v1+json sha256:bbbb 1.0 MiB  linux/amd64 -
registry.k8s.io/pause@sha256:cccc                  application/vnd.oci.image.manifest.v1+json sha256:cccc 1.0 MiB  linux/amd64 -
`
	got := digestTags([]byte(ls))
	want := [][2]string{{"localhost:5000/op:v2", "localhost:5000/op@sha256:bbbb"}}
	if !slices.Equal(got, want) {
		t.Errorf("digestTags = %q, want %q", got, want)
	}
}

func TestCapAndTail(t *testing.T) {
	s := strings.Repeat("é", 100) // 200 bytes
	c := capText(s, 51)
	if !strings.HasPrefix(c, strings.Repeat("é", 25)+"\n... (150 more bytes cut)") || !utf8.ValidString(c) {
		t.Errorf("capText = %q", c)
	}
	tl := tailText(s, 51)
	if !strings.HasSuffix(tl, strings.Repeat("é", 25)) || !strings.HasPrefix(tl, "(... 150 earlier bytes cut)") || !utf8.ValidString(tl) {
		t.Errorf("tailText = %q", tl)
	}
	if capText("short", 10) != "short" || tailText("short", 10) != "short" {
		t.Error("short text changed")
	}
}

func TestGlobalNamespace(t *testing.T) {
	dep := func(args ...string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "olm"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Args: args}}}}}}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--namespace", "marketplace"}, "marketplace"},
		{[]string{"-namespace=global"}, "global"},
		{[]string{"--debug"}, "olm"},
		{[]string{"--namespace"}, "olm"},
	} {
		if got := globalNamespace(dep(tc.args...)); got != tc.want {
			t.Errorf("globalNamespace(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestDecodeManifests(t *testing.T) {
	objs, err := decodeManifests([]byte(`---
# comment only
---
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: x}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: x}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: c.example.com}
`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		names = append(names, o.GetKind()+"/"+o.GetName())
	}
	if want := []string{"ConfigMap/a", "ConfigMap/b", "CustomResourceDefinition/c.example.com"}; !slices.Equal(names, want) {
		t.Errorf("objects = %q, want %q", names, want)
	}
	first, rest := splitFirst(objs)
	if len(first) != 1 || len(rest) != 2 {
		t.Errorf("splitFirst = %d, %d", len(first), len(rest))
	}
	if _, err := decodeManifests([]byte("metadata: {name: x}\n")); err == nil || !strings.Contains(err.Error(), "document 1: missing apiVersion or kind") {
		t.Errorf("missing kind: err = %v", err)
	}
}

func TestInstallModesOf(t *testing.T) {
	csv, _ := json.Marshal(map[string]any{"kind": "ClusterServiceVersion", "spec": map[string]any{"installModes": []any{
		map[string]any{"type": "OwnNamespace", "supported": true},
		map[string]any{"type": "AllNamespaces", "supported": false},
	}}})
	obj, _ := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString(csv)})
	c := &catalog.Catalog{
		Packages: []*catalog.Package{{Name: "p", DefaultChannel: "stable"}},
		Channels: []*catalog.Channel{
			{Name: "stable", Package: "p", Entries: []catalog.ChannelEntry{{Name: "p.v1"}, {Name: "p.v2", Replaces: "p.v1"}}},
			{Name: "fast", Package: "p", Entries: []catalog.ChannelEntry{{Name: "p.v3"}}},
		},
		Bundles: []*catalog.Bundle{
			{Name: "p.v2", Package: "p", Properties: []catalog.Property{{Type: catalog.PropertyBundleObject, Value: obj}}},
			{Name: "p.v3", Package: "p", Parsed: &catalog.Parsed{CSVMetadata: &catalog.CSVMetadata{InstallModes: []catalog.InstallMode{
				{Type: "AllNamespaces", Supported: true}}}}},
		},
	}
	if got := InstallModesOf(c, "p", ""); !slices.Equal(got, []string{"OwnNamespace"}) {
		t.Errorf("default channel: %v", got)
	}
	if got := InstallModesOf(c, "p", "fast"); !slices.Equal(got, []string{"AllNamespaces"}) {
		t.Errorf("fast: %v", got)
	}
	if got := InstallModesOf(c, "q", ""); got != nil {
		t.Errorf("unknown package: %v", got)
	}
}

// optionsCase changes valid options so that validate must refuse them, saying want.
type optionsCase struct {
	mod  func(*Options)
	want string
}

// requireRefused checks that validate refuses each case's change of ok with a usage error saying its want.
func requireRefused(t *testing.T, ok Options, cases map[string]optionsCase) {
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := ok
			tc.mod(&o)
			err := o.withDefaults().validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || diag.CategoryOf(err) != diag.Usage {
				t.Fatalf("err = %v, want usage error containing %q", err, tc.want)
			}
		})
	}
}
