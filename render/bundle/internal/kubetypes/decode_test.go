package kubetypes

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/catalogbot/catalogbot/internal/shareddata"
)

// decoder decodes data into a fresh value of the real type and of its copy, and says whether each
// accepted it.
type decoder struct {
	name  string
	kind  string // the manifests it applies to
	check func(data []byte) (real, copied error)
}

func stdJSON[R, C any](data []byte) (error, error) {
	var r R
	var c C
	return json.Unmarshal(data, &r), json.Unmarshal(data, &c)
}

// k8sJSON is how apimachinery's json serializer (non-strict) decodes into a typed object.
func k8sJSON[R, C any](data []byte) (error, error) {
	var r R
	var c C
	return kjson.UnmarshalCaseSensitivePreserveInts(data, &r), kjson.UnmarshalCaseSensitivePreserveInts(data, &c)
}

// deploymentSpecs decodes a CSV's install strategy as opm reads it (its deployments' specs).
func deploymentSpecs[S any](data []byte) error {
	var v struct {
		Spec struct {
			Install struct {
				Spec struct {
					Deployments []struct {
						Name string
						Spec S `json:"spec"`
					}
				} `json:"spec"`
			}
		}
	}
	return json.Unmarshal(data, &v)
}

// csvWithMetadata decodes a CSV into the real type and the copy and, when both accept it, requires the
// parts an olm.csv.metadata property is made of to encode to the same bytes.
func csvWithMetadata(data []byte) (error, error) {
	var r v1alpha1.ClusterServiceVersion
	var c ClusterServiceVersion
	realErr, copyErr := json.Unmarshal(data, &r), json.Unmarshal(data, &c)
	if realErr != nil || copyErr != nil {
		return realErr, copyErr
	}
	rs, cs := r.Spec, c.Spec
	want, err1 := json.Marshal([]any{r.Annotations, r.Labels, rs.APIServiceDefinitions, rs.CustomResourceDefinitions, rs.Description,
		rs.DisplayName, rs.InstallModes, rs.Keywords, rs.Links, rs.Maintainers, rs.Maturity, rs.MinKubeVersion, rs.NativeAPIs, rs.Provider})
	got, err2 := json.Marshal([]any{c.Annotations, c.Labels, cs.APIServiceDefinitions, cs.CustomResourceDefinitions, cs.Description,
		cs.DisplayName, cs.InstallModes, cs.Keywords, cs.Links, cs.Maintainers, cs.Maturity, cs.MinKubeVersion, cs.NativeAPIs, cs.Provider})
	if err1 != nil || err2 != nil || string(want) != string(got) {
		return nil, fmt.Errorf("the olm.csv.metadata parts encode differently (%v, %v):\nreal: %s\ncopy: %s", err1, err2, want, got)
	}
	return nil, nil
}

func objectMeta[M any](data []byte) error {
	var v struct {
		Metadata M `json:"metadata"`
	}
	return json.Unmarshal(data, &v)
}

var decoders = []decoder{
	{"ClusterServiceVersion", "ClusterServiceVersion", csvWithMetadata},
	{"DeploymentSpec", "ClusterServiceVersion", func(d []byte) (error, error) {
		return deploymentSpecs[appsv1.DeploymentSpec](d), deploymentSpecs[DeploymentSpec](d)
	}},
	{"ObjectMeta", "", func(d []byte) (error, error) { return objectMeta[metav1.ObjectMeta](d), objectMeta[ObjectMeta](d) }},
	{"TypeMeta", "", stdJSON[metav1.TypeMeta, TypeMeta]},
	{"CRDv1", "CustomResourceDefinition", k8sJSON[apiextv1.CustomResourceDefinition, CRDv1]},
	{"CRDv1beta1", "CustomResourceDefinition", k8sJSON[apiextv1beta1.CustomResourceDefinition, CRDv1beta1]},
}

// manifests are the JSON of every object in the shared data's bundles, by kind.
func manifests(t *testing.T) map[string][][]byte {
	t.Helper()
	root := shareddata.Dir(t, "bundles")
	out := map[string][][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) != "manifests" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		js, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil // not every file of manifests/ is an object; the bundle tests cover those
		}
		var obj struct{ Kind string }
		if json.Unmarshal(js, &obj) != nil {
			return nil
		}
		out[obj.Kind] = append(out[obj.Kind], js)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out["ClusterServiceVersion"]) == 0 || len(out["CustomResourceDefinition"]) == 0 {
		t.Fatalf("no ClusterServiceVersion or CustomResourceDefinition under %s", root)
	}
	return out
}

// values are what a mutation puts somewhere: one of each JSON kind, and the edge values of the custom
// types (quantities, timestamps, int32 and int64 bounds, a version).
var values = []string{
	`null`, `true`, `false`, `0`, `-1`, `1.5`, `2147483647`, `2147483648`, `-2147483649`, `9223372036854775808`,
	`1e3`, `1e400`, `4294967296`, `""`, `"x"`, `"1Gi"`, `"500m"`, `"1.5"`, `"1e3"`, `"12Zi"`, `"-0.1Mi"`,
	`" 1Gi "`, `"\u0031Gi"`, `"2024-01-02T03:04:05Z"`, `"2024-01-02"`, `"1.2.3"`, `"v1.2.3-rc.1"`, `"8080"`,
	`{}`, `{"a":1}`, `[]`, `["x"]`, `[1]`, `[{}]`, `{"type":"string"}`, `[{"type":"object"}]`,
}

// mutate returns doc with one value replaced, or one key's case changed, at a random place.
func mutate(r *rand.Rand, doc any) any {
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		paths = append(paths, slices.Clone(path))
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(mapKeys(x)) {
				walk(x[k], append(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, append(path, i))
			}
		}
	}
	walk(doc, nil)
	path := paths[r.IntN(len(paths))]
	var value any
	if err := json.Unmarshal([]byte(values[r.IntN(len(values))]), &value); err != nil {
		value = json.Number("1e400")
	}
	if r.IntN(5) == 0 && len(path) > 0 {
		if k, ok := path[len(path)-1].(string); ok {
			return setAt(doc, path[:len(path)-1], func(parent any) any {
				m := parent.(map[string]any)
				v := m[k]
				delete(m, k)
				m[strings.ToUpper(k[:1])+k[1:]] = v
				return m
			})
		}
	}
	return setAt(doc, path, func(any) any { return value })
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func setAt(v any, path []any, f func(any) any) any {
	if len(path) == 0 {
		return f(v)
	}
	switch x := v.(type) {
	case map[string]any:
		k := path[0].(string)
		x[k] = setAt(x[k], path[1:], f)
	case []any:
		i := path[0].(int)
		x[i] = setAt(x[i], path[1:], f)
	}
	return v
}

// TestCopiesDecodeAsTheRealTypes decodes every real manifest of the shared data, and thousands of
// mutations of them (a value of another kind or an edge value anywhere, a key with another case), into the
// real types and into their copies, with the decoder opm uses for each: the two must accept and refuse
// the same documents.
func TestCopiesDecodeAsTheRealTypes(t *testing.T) {
	byKind := manifests(t)
	mutations := 3000
	if testing.Short() {
		mutations = 300
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, d := range decoders {
		t.Run(d.name, func(t *testing.T) {
			var docs [][]byte
			if d.kind == "" {
				for _, k := range slices.Sorted(func(yield func(string) bool) {
					for k := range byKind {
						if !yield(k) {
							return
						}
					}
				}) {
					docs = append(docs, byKind[k]...)
				}
			} else {
				docs = byKind[d.kind]
			}
			accepted, refused := 0, 0
			compare := func(label string, data []byte) {
				realErr, copyErr := d.check(data)
				if (realErr == nil) != (copyErr == nil) {
					t.Fatalf("%s: the real type says %v, the copy says %v, for:\n%s", label, realErr, copyErr, data)
				}
				if realErr == nil {
					accepted++
				} else {
					refused++
				}
			}
			for i, doc := range docs {
				compare(fmt.Sprintf("manifest %d", i), doc)
			}
			for i := range mutations {
				var doc any
				if err := json.Unmarshal(docs[r.IntN(len(docs))], &doc); err != nil {
					t.Fatal(err)
				}
				data, err := json.Marshal(mutate(r, doc))
				if err != nil {
					t.Fatal(err)
				}
				compare(fmt.Sprintf("mutation %d", i), data)
			}
			t.Logf("%d documents accepted, %d refused by both", accepted, refused)
			if refused == 0 || accepted == 0 {
				t.Fatalf("the mutations never make both outcomes (%d accepted, %d refused)", accepted, refused)
			}
		})
	}
}
