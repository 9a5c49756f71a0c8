package build

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultBuilderImage is the builder stage image `opm generate dockerfile` uses unless told otherwise
// (operator-registry's DefaultBinarySourceImage).
const DefaultBuilderImage = "quay.io/operator-framework/opm:latest"

// DockerfileSpec holds the inputs of `opm generate dockerfile`.
type DockerfileSpec struct {
	// Base is the final stage image (-i); "scratch" gives a binary-less catalog image.
	Base string
	// Builder is the build stage image (-b); empty means DefaultBuilderImage.
	Builder string
	// ConfigsDir is the catalog directory; only its base name is written (the Dockerfile sits beside it).
	ConfigsDir string
	// ExtraLabels (-l key=value) are written sorted by key.
	ExtraLabels map[string]string
}

// Dockerfile returns exactly what `opm generate dockerfile -i base configsDir` (v1.73.0) writes to
// <configsDir>.Dockerfile. It is the daemon-based equivalent of Image, for users who build with docker or
// podman; unlike Image it pre-builds opm's serve cache in a build stage.
func Dockerfile(base, configsDir string) []byte {
	return DockerfileFor(DockerfileSpec{Base: base, ConfigsDir: configsDir})
}

// DockerfileFor is Dockerfile with every `opm generate dockerfile` input.
func DockerfileFor(s DockerfileSpec) []byte {
	builder := s.Builder
	if builder == "" {
		builder = DefaultBuilderImage
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The builder image is expected to contain\n# /bin/opm (with serve subcommand)\nFROM %s as builder\n\n", builder)
	fmt.Fprintf(&b, "# Copy FBC root into image at /configs and pre-populate serve cache\nADD %s %s\n", filepath.Base(filepath.Clean(s.ConfigsDir)), ConfigsDir)
	b.WriteString(`RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]` + "\n\n")
	fmt.Fprintf(&b, "FROM %s", s.Base)
	if s.Base != "scratch" {
		b.WriteString("\n# The base image is expected to contain\n# /bin/opm (with serve subcommand) and /bin/grpc_health_probe\n\n")
		b.WriteString("# Configure the entrypoint and command\n" + `ENTRYPOINT ["/bin/opm"]` + "\n" + `CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]`)
	} else {
		b.WriteString("\n# OLMv0 CatalogSources that use binary-less images must set:\n# spec:\n#   grpcPodConfig:\n#     extractContent:\n#       catalogDir: /configs\n#       cacheDir: /tmp/cache")
	}
	b.WriteString("\n\nCOPY --from=builder /configs /configs\nCOPY --from=builder /tmp/cache /tmp/cache\n\n")
	b.WriteString("# Set FBC-specific label for the location of the FBC root directory\n# in the image\nLABEL " + ConfigsLabel + "=" + ConfigsDir)
	if len(s.ExtraLabels) > 0 {
		b.WriteString("\n\n# Set other custom labels")
		for _, k := range slices.Sorted(maps.Keys(s.ExtraLabels)) {
			fmt.Fprintf(&b, "\nLABEL \"%s\"=\"%s\"", k, s.ExtraLabels[k])
		}
	}
	b.WriteString("\n")
	return []byte(b.String())
}
