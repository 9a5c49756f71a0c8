#!/usr/bin/env bash
# Builds the CNCF distribution registry binary (for end-to-end lanes) into the shared cache; prints its path.
set -euo pipefail
version="${REGISTRY_VERSION:-v3.1.2}"
cache="$("$(dirname "$0")/cache-dir.sh")/tools/registry-$version"
bin="$cache/registry"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$cache"
GOBIN="$cache" CGO_ENABLED=0 go install "github.com/distribution/distribution/v3/cmd/registry@$version" >&2
echo "$bin"
