#!/usr/bin/env bash
# Builds the reference opm (test oracle only, never imported by the product) into the shared cache.
# `go install` of operator-registry fails through this module proxy (its version list is refused), so the
# module is downloaded by exact version and built inside its own module directory.
# Usage: build-opm.sh [VERSION] (default v1.73.0; OPM_VERSION also works). Repositories pin older opms
# (community-operators-prod renders with v1.46.0), so the differential tests need more than one.
# Prints the path of the binary. Idempotent: a cached binary is reused.
set -euo pipefail
version="${1:-${OPM_VERSION:-v1.73.0}}"
cache="$("$(dirname "$0")/cache-dir.sh")/tools/opm-$version"
bin="$cache/opm"
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then echo "$bin"; exit 0; fi
mkdir -p "$cache"
# hack/test.sh and the kind lane's cache build (whose in-cluster opm is this build) may ask at once: one
# builds, the other waits for it and reuses the binary.
exec 9>"$cache/.lock"
flock 9
if [ -x "$bin" ] && "$bin" version >/dev/null 2>&1; then echo "$bin"; exit 0; fi
dir=$(go mod download -json "github.com/operator-framework/operator-registry@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { echo "build-opm: module dir for operator-registry@$version not found" >&2; exit 1; }
(cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -tags json1,containers_image_openpgp -o "$bin.tmp" ./cmd/opm) >&2
mv "$bin.tmp" "$bin"
echo "$bin"
