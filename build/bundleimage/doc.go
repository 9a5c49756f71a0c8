// Package bundleimage builds an OLM registry+v1 bundle image from a bundle directory
// (operators/<package>/<version>/ of a catalog repository) and pushes it, without a container daemon.
//
// The image is what `opm alpha bundle build`, operator-sdk's generated bundle.Dockerfile and
// operator-pipelines' bundle Dockerfile build (FROM scratch, COPY manifests/ and metadata/): one layer
// holding manifests/ and metadata/ (and tests/scorecard/ when the directory has it, as operator-sdk's
// Dockerfile copies it) at the image root, and every annotation of metadata/annotations.yaml as an image
// config label, plus the core operators.operatorframework.io.bundle.* labels opm's Dockerfile names
// (mediatype, manifests, metadata) when the annotations leave them out. Nothing else of the directory
// (release-config.yaml, a README) goes in.
//
// It is reproducible: entries sorted by path, owned by 0:0, files 0644 and directories 0755, every
// timestamp the Unix epoch (never $SOURCE_DATE_EPOCH, the clock or the file system's times, owners or
// modes), a gzip header without name or time, the config's created time the epoch. The same directory
// gives the same digest on every machine (with the same catalogbot: a Go release that changed
// compress/flate's output would change the layer's bytes; TestBuildGoldenDigest says so). It is one
// linux/amd64 image, not an index: a bundle is data, the same on every architecture, and a container
// runtime pulls a single-manifest image on any node (upstream's pipeline builds the same on amd64).
//
// The directory is hostile input: it is read through an os.Root (nothing outside it is opened), symbolic
// links, special files and look-alike names are refused (as filetree.ListCatalog refuses them in a
// catalog), manifests/ and metadata/ must be real directories, and sizes are capped (MaxFileSize,
// MaxTotalSize, MaxFiles: the numbers of render/bundle's limits).
//
// The entry points:
//
//	img, err := bundleimage.Build(ctx, dir)                        // the image, nothing pushed
//	digestRef, err := bundleimage.Push(ctx, dir, ref, opts...)     // build, push by digest, then move ref's tag
//
// Push returns "registry/repo@sha256:..."; ref is a tag reference (quay.io/org/pkg:1.2.3, as
// release.bundleImage names bundle images) or a digest reference the image must have. The tag is set only
// after everything is pushed by digest, so a failed push never leaves the tag on a partial image, and
// never when it holds another image already (a released bundle image is not replaced); pushing the same
// directory again returns the same digest. Only after Push returns may anything (a template, a pull
// request) name ref. Registry errors are
// diag.InfraError wrapping a message that names ref, and Push gives up within WithTimeout (DefaultTimeout).
// Push does not check the manifests: render the bundle first (render/bundle.RenderDir), as
// `catalogbot release` does.
package bundleimage
