package kubetypes

import (
	"bytes"
	"encoding"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextv1beta1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var update = flag.Bool("update", false, "rewrite zz_generated.go from the real types")

// roots are the real types opm decodes into, and the names of their copies.
var roots = []struct {
	name string
	typ  reflect.Type
}{
	{"TypeMeta", reflect.TypeFor[metav1.TypeMeta]()},
	{"ObjectMeta", reflect.TypeFor[metav1.ObjectMeta]()},
	{"DeploymentSpec", reflect.TypeFor[appsv1.DeploymentSpec]()},
	{"ClusterServiceVersion", reflect.TypeFor[v1alpha1.ClusterServiceVersion]()},
	{"CRDv1", reflect.TypeFor[apiextv1.CustomResourceDefinition]()},
	{"CRDv1beta1", reflect.TypeFor[apiextv1beta1.CustomResourceDefinition]()},
}

// prefixes name the copies of each package's types.
var prefixes = map[string]string{
	"k8s.io/apimachinery/pkg/apis/meta/v1":                          "Meta",
	"k8s.io/api/core/v1":                                            "Core",
	"k8s.io/api/apps/v1":                                            "Apps",
	"k8s.io/api/admissionregistration/v1":                           "Admission",
	"k8s.io/api/rbac/v1":                                            "RBAC",
	"github.com/operator-framework/api/pkg/operators/v1alpha1":      "OLM",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1":      "ExtV1",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1": "ExtV1beta1",
}

// custom are the types with their own UnmarshalJSON and what stands for each: a type of custom.go, or the
// real type where it is light.
var custom = map[string]string{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":                                                  "Time",
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":                                              "FieldsV1",
	"k8s.io/apimachinery/pkg/api/resource.Quantity":                                              "Quantity",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString":                                            "IntOrString",
	"github.com/operator-framework/api/pkg/lib/version.OperatorVersion":                          "version.OperatorVersion",
	"github.com/operator-framework/api/pkg/lib/release.OperatorRelease":                          "release.OperatorRelease",
	"encoding/json.RawMessage":                                                                   "json.RawMessage",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSON":                              "JSON",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1.JSON":                         "JSON",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrBool":             "SchemaOrBool[ExtV1JSONSchemaProps]",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1.JSONSchemaPropsOrBool":        "SchemaOrBool[ExtV1beta1JSONSchemaProps]",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrArray":            "SchemaOrArray[ExtV1JSONSchemaProps]",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1.JSONSchemaPropsOrArray":       "SchemaOrArray[ExtV1beta1JSONSchemaProps]",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.JSONSchemaPropsOrStringArray":      "SchemaOrStringArray[ExtV1JSONSchemaProps]",
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1beta1.JSONSchemaPropsOrStringArray": "SchemaOrStringArray[ExtV1beta1JSONSchemaProps]",
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// generator writes the copy of each named struct type reachable from the roots.
type generator struct {
	t     *testing.T
	names map[reflect.Type]string
	decls map[string]string
	queue []reflect.Type
}

func (g *generator) fullName(t reflect.Type) string { return t.PkgPath() + "." + t.Name() }

// typeExpr is the Go type expression of the copy of t.
func (g *generator) typeExpr(t reflect.Type) string {
	if t.Name() != "" {
		if c, ok := custom[g.fullName(t)]; ok {
			return c
		}
		if reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
			g.t.Fatalf("%s has its own UnmarshalJSON or UnmarshalText: give it a stand-in in custom.go and in custom", g.fullName(t))
		}
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return t.Kind().String()
	case reflect.Pointer:
		return "*" + g.typeExpr(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "[]byte"
		}
		return "[]" + g.typeExpr(t.Elem())
	case reflect.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), g.typeExpr(t.Elem()))
	case reflect.Map:
		k := t.Key()
		if reflect.PointerTo(k).Implements(textUnmarshaler) || k.Kind() != reflect.String {
			g.t.Fatalf("map key %s of %s: only string keys are copied", k, t)
		}
		return "map[string]" + g.typeExpr(t.Elem())
	case reflect.Interface:
		if t.NumMethod() > 0 {
			g.t.Fatalf("interface type %s in a decoded type", t)
		}
		return "any"
	case reflect.Struct:
		if t.Name() == "" {
			return "struct {\n" + g.fields(t) + "}"
		}
		name, ok := g.names[t]
		if !ok {
			prefix, known := prefixes[t.PkgPath()]
			if !known {
				g.t.Fatalf("struct %s: package %s has no prefix", g.fullName(t), t.PkgPath())
			}
			name = prefix + t.Name()
			g.names[t] = name
			g.queue = append(g.queue, t)
		}
		return name
	}
	g.t.Fatalf("type %s of kind %s is not copied", t, t.Kind())
	return ""
}

// fields is the field list of the copy of struct type t.
func (g *generator) fields(t reflect.Type) string {
	var b strings.Builder
	for f := range t.Fields() {
		if !f.IsExported() {
			if f.Anonymous {
				g.t.Fatalf("%s embeds unexported %s", t, f.Type)
			}
			continue
		}
		expr := g.typeExpr(f.Type)
		if f.Anonymous {
			base := f.Type
			if base.Kind() == reflect.Pointer {
				base = base.Elem()
			}
			if base.Kind() != reflect.Struct || base.Name() == "" {
				g.t.Fatalf("%s embeds %s, which is not a named struct", t, f.Type)
			}
			b.WriteString(expr)
		} else {
			b.WriteString(f.Name + " " + expr)
		}
		if tag, ok := f.Tag.Lookup("json"); ok {
			fmt.Fprintf(&b, " `json:%q`", tag)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func generate(t *testing.T) []byte {
	g := &generator{t: t, names: map[reflect.Type]string{}, decls: map[string]string{}}
	var aliases []string
	for _, r := range roots {
		aliases = append(aliases, fmt.Sprintf("%s = %s", r.name, g.typeExpr(r.typ)))
	}
	for len(g.queue) > 0 {
		st := g.queue[0]
		g.queue = g.queue[1:]
		g.decls[g.names[st]] = fmt.Sprintf("// %s copies %s.\ntype %s struct {\n%s}\n", g.names[st], g.fullName(st), g.names[st], g.fields(st))
	}
	var src bytes.Buffer
	src.WriteString("// Code generated by `go test ./render/bundle/internal/kubetypes -run TestGenerated -update`. DO NOT EDIT.\n\n")
	src.WriteString("package kubetypes\n\n")
	src.WriteString("import (\n\t\"encoding/json\"\n\n\t\"github.com/operator-framework/api/pkg/lib/release\"\n\t\"github.com/operator-framework/api/pkg/lib/version\"\n)\n\n")
	src.WriteString("// The roots: what opm decodes bundle manifests into.\ntype (\n")
	for _, a := range aliases {
		src.WriteString(a + "\n")
	}
	src.WriteString(")\n\n")
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range g.decls {
			if !yield(n) {
				return
			}
		}
	}) {
		src.WriteString(g.decls[name] + "\n")
	}
	out, err := format.Source(src.Bytes())
	if err != nil {
		t.Fatalf("formatting the generated source: %v\n%s", err, src.Bytes())
	}
	return out
}

// TestGenerated fails when zz_generated.go is not what the real types give today (after a dependency
// update): run it with -update and review the diff.
func TestGenerated(t *testing.T) {
	want := generate(t)
	const file = "zz_generated.go"
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: the real types changed; run go test ./render/bundle/internal/kubetypes -run TestGenerated -update", file)
	}
}
