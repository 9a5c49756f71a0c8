// Package smoke is the smoke-install stage: it installs each changed package from a built catalog image
// into a real Kubernetes cluster running OLM (a kind cluster it creates, a named kind cluster it reuses, or
// any cluster a kubeconfig points at) and reports per package whether its ClusterServiceVersion reached
// Succeeded, with bounded diagnostics when it did not.
//
// The catalog is always referenced by digest: OLM pulls tag references with imagePullPolicy Always, which
// fails for images loaded into kind nodes from an archive.
package smoke
