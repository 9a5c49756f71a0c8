// Package kubetypes holds decode-only copies of the Kubernetes and OLM API types that opm v1.73.0 decodes a
// bundle's manifests into: the ClusterServiceVersion (operator-framework/api operators/v1alpha1), the
// apps/v1 DeploymentSpec of its install strategy, object metadata, and both versions of the
// CustomResourceDefinition (apiextensions v1 and v1beta1).
//
// opm's strictness lives in those types: a manifest is refused when a value does not fit its field (a
// string where an int32 goes, a malformed quantity, a bad timestamp). Linking the real types costs every
// run of the lean catalogbot about 5 MB of start-up RSS and most of client-go, for a verb that only needs
// their shape. So the struct types here are generated from the real ones by reflection
// (zz_generated.go, written by `go test ./render/bundle/internal/kubetypes -run TestGenerated -update`):
// the same Go field names, kinds and json tags, so encoding/json and sigs.k8s.io/json accept and refuse
// exactly what they accept and refuse for the real types. The few types with their own UnmarshalJSON are
// written by hand in custom.go with the same rules (timestamps, int-or-string, quantities through
// apimachinery's own parser, the JSON-schema unions of the CRD types); the real OperatorVersion and
// OperatorRelease are used as they are (they are small). Tests hold the copies to the real types: the
// generated file must be what the generator writes today, and decoding thousands of mutated real
// manifests must accept and refuse the same as the real types do.
package kubetypes
