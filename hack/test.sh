#!/usr/bin/env bash
# The test command README names: everything CI runs. Reference tools (opm, the distribution registry) are
# built once into the cache (hack/cache-dir.sh) and reused; the differential and end-to-end tests need them
# and CI must not skip them, so this script builds them first (in parallel with the module download).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { echo "==> [$(( $(date +%s) - start ))s] $*"; }

step "downloading modules"
go mod download

step "building reference tools (cached): opm, distribution registry"
logs=$(mktemp -d)
bash hack/build-opm.sh >"$logs/opm.path" 2>"$logs/opm.log" & opm_pid=$!
bash hack/build-registry.sh >"$logs/registry.path" 2>"$logs/registry.log" & reg_pid=$!

step "go vet"
go vet ./...

wait "$opm_pid" || { cat "$logs/opm.log"; echo "building opm failed" >&2; exit 1; }
wait "$reg_pid" || { cat "$logs/registry.log"; echo "building the registry failed" >&2; exit 1; }
export CATALOGBOT_OPM="$(cat "$logs/opm.path")"
export CATALOGBOT_REGISTRY_BIN="$(cat "$logs/registry.path")"
# CI must run the differential and end-to-end tests, never skip them for a missing tool.
export CATALOGBOT_REQUIRE_TOOLS=1
step "opm: $CATALOGBOT_OPM; registry: $CATALOGBOT_REGISTRY_BIN"

# Real data (public catalogs, bundles, webhook payloads, GitHub's OpenAPI description) lives next to the
# repository in ../shared/data; tests find it through CATALOGBOT_SHARED_DATA.
if [ -z "${CATALOGBOT_SHARED_DATA:-}" ] && [ -d ../shared/data ]; then
  CATALOGBOT_SHARED_DATA="$(cd ../shared/data && pwd)"
fi
if [ -n "${CATALOGBOT_SHARED_DATA:-}" ] && [ -d "$CATALOGBOT_SHARED_DATA" ]; then
  export CATALOGBOT_SHARED_DATA CATALOGBOT_REQUIRE_DATA=1
  step "shared data: $CATALOGBOT_SHARED_DATA"
else
  step "SHARED DATA NOT FOUND (../shared/data): TESTS ON REAL CATALOGS, BUNDLES AND PAYLOADS ARE SKIPPED"
fi

step "go test ./..."
go test -count=1 -timeout 40m ./...

step "main job: catalogbot demo"
go run ./cmd/catalogbot demo
step "done"
