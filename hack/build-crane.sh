#!/usr/bin/env bash
# Builds crane (go-containerregistry's CLI; the baseline of the check-images benchmark) into the cache.
set -euo pipefail
version="${CRANE_VERSION:-v0.22.1}"
cache="$("$(dirname "$0")/cache-dir.sh")/tools/crane-$version"
bin="$cache/crane"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
mkdir -p "$cache"
GOBIN="$cache" CGO_ENABLED=0 go install "github.com/google/go-containerregistry/cmd/crane@$version" >&2
echo "$bin"
