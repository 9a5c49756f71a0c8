#!/usr/bin/env bash
# Benchmark: `catalogbot render` against the docs' sequential `opm render` loop, on the packages of a
# catalog (default composed-279: 279 packages) served as per-package index images from a local registry.
#   bash bench/render.sh [CATALOG_DIR] [N_PACKAGES]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(bash bench/catalogbot.sh)"
opm="${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}"
"$(bash bench/tool.sh renderbench)" -catalog "${1:-../shared/data/catalogs/composed-279}" -n "${2:-0}" -catalogbot "$bin" -opm "$opm"
