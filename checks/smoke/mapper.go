package smoke

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// resourceMapper finds the resource serving a kind from the server's discovery documents, one group
// version at a time, as client-go's discovery RESTMapper would (whose package registers every
// Kubernetes type at init: see coreAPI). A group version is read once per mapper; a kind it does not
// list is read again once, in case a CRD applied since then now serves it.
type resourceMapper struct {
	discover func(ctx context.Context, gv schema.GroupVersion) ([]metav1.APIResource, error)
	seen     map[schema.GroupVersion][]metav1.APIResource
}

func (m *resourceMapper) resourceFor(ctx context.Context, gvk schema.GroupVersionKind) (metav1.APIResource, error) {
	gv := gvk.GroupVersion()
	for attempt := 0; attempt < 2; attempt++ {
		list, ok := m.seen[gv]
		if !ok || attempt > 0 {
			var err error
			if list, err = m.discover(ctx, gv); err != nil {
				if attempt == 0 && ctx.Err() == nil {
					continue // e.g. 404 for a group version a CRD serves only since
				}
				return metav1.APIResource{}, fmt.Errorf("discovering the resources of %s: %w", gvString(gv), err)
			}
			if m.seen == nil {
				m.seen = map[schema.GroupVersion][]metav1.APIResource{}
			}
			m.seen[gv] = list
		}
		for _, r := range list {
			if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") { // not a subresource
				return r, nil
			}
		}
	}
	return metav1.APIResource{}, fmt.Errorf("the server serves no resource of kind %s in %s", gvk.Kind, gvString(gv))
}

func gvString(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return gv.Version
	}
	return gv.String()
}

// discoveryClient reads the discovery document of a group version: /api/v1 for the core group,
// /apis/GROUP/VERSION for the others.
func discoveryClient(raw rest.Interface) func(ctx context.Context, gv schema.GroupVersion) ([]metav1.APIResource, error) {
	return func(ctx context.Context, gv schema.GroupVersion) ([]metav1.APIResource, error) {
		path := "/apis/" + gv.Group + "/" + gv.Version
		if gv.Group == "" {
			path = "/api/" + gv.Version
		}
		data, err := raw.Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %w", path, err)
		}
		var list metav1.APIResourceList
		if err := json.Unmarshal(data, &list); err != nil {
			return nil, fmt.Errorf("GET %s: decoding the resource list: %w", path, err)
		}
		return list.APIResources, nil
	}
}
