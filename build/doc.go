// Package build builds and publishes an OLM catalog image without a container daemon.
//
// The image is the base image (by default the upstream opm image) plus one reproducible layer holding the
// file-based catalog under /configs, with the entrypoint, command and label that `opm generate dockerfile`
// gives a catalog image. Identical input gives an identical layer and an identical image digest: file order,
// ownership, modes, timestamps and the gzip header are all fixed.
//
// A multi-arch base (an image index) gives a multi-arch catalog: the same layer is appended to every
// selected platform image. Publishing pushes everything by digest first and moves the tag last, so a failed
// push never leaves the tag on a half-written image, and only the catalog layer and the configs are
// uploaded: base layers are cross-repository mounted or already present.
package build
