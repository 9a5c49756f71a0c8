// Package smoke holds the end-to-end test of the smoke-install stage against a real kind cluster with OLM,
// built offline by hack/kind-offline (run it with `bash hack/kind-offline/lane.sh`). The test has the
// build tag e2e.
package smoke
