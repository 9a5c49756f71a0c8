package smoke

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

var metaGet = metav1.GetOptions{}

const fieldManager = "catalogbot-smoke"

// applier server-side-applies objects; the RESTMapper is refreshed between calls so CRDs applied by one
// call are usable by the next.
type applier interface {
	Apply(ctx context.Context, objs []*unstructured.Unstructured) error
}

type serverApplier struct {
	dyn dynamic.Interface
	// discover returns the API resources the server serves for a group version (discoveryClient).
	discover func(ctx context.Context, gv schema.GroupVersion) ([]metav1.APIResource, error)
}

func (a *serverApplier) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	m := &resourceMapper{discover: a.discover}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		res, err := m.resourceFor(ctx, gvk)
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
		}
		data, err := o.MarshalJSON()
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvk.Kind, o.GetName(), err)
		}
		gvr := gvk.GroupVersion().WithResource(res.Name)
		var ri dynamic.ResourceInterface = a.dyn.Resource(gvr)
		if res.Namespaced {
			ns := o.GetNamespace()
			if ns == "" {
				ns = "default"
			}
			ri = a.dyn.Resource(gvr).Namespace(ns)
		}
		force := true
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: fieldManager, Force: &force}); err != nil {
			return fmt.Errorf("applying %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
	}
	return nil
}

// readManifests reads every *.yaml/*.yml/*.json file of dir (name order), splitting YAML streams,
// skipping empty documents and expanding List kinds.
func readManifests(dir string) ([]*unstructured.Unstructured, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("OLM manifests: %w", err)
	}
	var names []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return nil, fmt.Errorf("OLM manifests: no *.yaml files in %s", dir)
	}
	var out []*unstructured.Unstructured
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("OLM manifests: %w", err)
		}
		objs, err := decodeManifests(data)
		if err != nil {
			return nil, fmt.Errorf("OLM manifests: %s: %w", filepath.Join(dir, n), err)
		}
		out = append(out, objs...)
	}
	return out, nil
}

func decodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []*unstructured.Unstructured
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		if len(u.Object) == 0 {
			continue
		}
		if u.GetKind() == "" || u.GetAPIVersion() == "" {
			return nil, fmt.Errorf("document %d: missing apiVersion or kind", i)
		}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			for j := range l.Items {
				out = append(out, &l.Items[j])
			}
			continue
		}
		out = append(out, u)
	}
}

// splitFirst separates what must exist before the rest can be applied: namespaces and CRDs.
func splitFirst(objs []*unstructured.Unstructured) (first, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		switch o.GetKind() {
		case "Namespace", "CustomResourceDefinition":
			first = append(first, o)
		default:
			rest = append(rest, o)
		}
	}
	return first, rest
}
