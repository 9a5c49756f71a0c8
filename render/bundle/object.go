package bundle

import (
	"fmt"
	"strings"

	kjson "sigs.k8s.io/json"
)

// object is one Kubernetes object of a bundle, decoded as opm decodes manifests (apimachinery's
// unstructured objects): a JSON object read by sigs.k8s.io/json, integers kept as int64 and other
// numbers as float64, which must have a kind. Encoding it gives opm's olm.bundle.object bytes.
type object struct {
	Object map[string]any
}

// UnmarshalJSON decodes an object as apimachinery's unstructured JSON scheme does: null leaves no object
// and no error here (the caller refuses it); an object without a kind, or whose apiVersion is not
// group/version, is refused.
func (o *object) UnmarshalJSON(b []byte) error {
	m := map[string]any{}
	if err := kjson.UnmarshalCaseSensitivePreserveInts(b, &m); err != nil {
		return err
	}
	o.Object = m
	if _, _, kind := o.gvk(); kind == "" {
		//lint:ignore ST1005 apimachinery's words, which opm prints: the diagnostics match opm's
		return fmt.Errorf("Object 'Kind' is missing in '%s'", b)
	}
	return nil
}

// str is a top-level string field, "" when absent or not a string.
func (o *object) str(key string) string {
	s, _ := o.Object[key].(string)
	return s
}

func (o *object) kind() string { return o.str("kind") }

// gvk is the object's group, version and kind; all empty when its apiVersion is not "", "version" or
// "group/version".
func (o *object) gvk() (group, version, kind string) {
	group, version, err := parseGroupVersion(o.str("apiVersion"))
	if err != nil {
		return "", "", ""
	}
	return group, version, o.kind()
}

// parseGroupVersion splits an apiVersion as apimachinery does: "" and "/" are empty, "v1" has no group,
// more than one slash is an error.
func parseGroupVersion(gv string) (group, version string, err error) {
	if gv == "" || gv == "/" {
		return "", "", nil
	}
	switch strings.Count(gv, "/") {
	case 0:
		return "", gv, nil
	case 1:
		group, version, _ = strings.Cut(gv, "/")
		return group, version, nil
	}
	return "", "", fmt.Errorf("unexpected GroupVersion string: %v", gv)
}
