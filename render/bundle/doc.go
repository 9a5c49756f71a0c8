// Package bundle renders an OLM registry+v1 bundle (a directory holding manifests/ and metadata/) into an
// olm.bundle file-based-catalog blob, exactly as `opm render` v1.73.0 does.
//
// By default the blob has opm's default form: one olm.bundle.object property per manifest (base64 JSON),
// olm.package, olm.gvk, olm.gvk.required, olm.package.required and the properties of
// metadata/properties.yaml, metadata/dependencies.yaml and the CSV's olm.properties annotation, sorted as
// opm sorts them. Options.CSVMetadata gives the form of `opm render --migrate-level
// bundle-object-to-csv-metadata`: the bundle objects replaced by one olm.csv.metadata property (opm only
// does that when the bundle has an image).
//
// opm puts "" in the blob's image field when it renders a bundle directory and the image reference when
// it renders a bundle image; Render takes that string as a parameter. relatedImages are the CSV's
// spec.relatedImages, the bundle image, and the images of the install strategy's deployment containers and
// init containers, sorted by image.
//
// The decoding follows opm's step by step, so values, numbers and escaping come out byte for byte the same
// and the same manifests are refused: Kubernetes' YAML-or-JSON decoder, objects read as apimachinery's
// unstructured objects are (object.go), CRDs decoded as its JSON deserializer decodes them, the CSV's
// metadata, install strategy and olm.csv.metadata through the apps/v1 and operators/v1alpha1 types. The
// API types are generated copies (internal/kubetypes), held to the real ones by tests, so the lean
// catalogbot does not link Kubernetes' API machinery. Where opm silently drops or mis-reads a manifest,
// Render is stricter and says why (see Render). Input is treated as hostile: file sizes are capped, symlinks may not
// leave the bundle, and YAML alias bombs are refused by the decoder.
package bundle
