#!/usr/bin/env bash
# Benchmark, in one run, on the 22 community-operators packages of the shared data (11 catalogs):
# `catalogbot render` re-rendering every template mapping (warm cache) against upstream's loop of
# `opm alpha render-template` per mapping, and `catalogbot validate` of all catalogs against `opm
# validate` per catalog; bundle images in a local registry. Prints the times and the ratios.
#   bash bench/templates.sh [REPO]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(bash bench/catalogbot.sh)"
opm="${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}"
"$(bash bench/tool.sh templatebench)" -repo "${1:-${CATALOGBOT_SHARED_DATA:-../shared/data}/fbc-templates}" -catalogbot "$bin" -opm "$opm"
