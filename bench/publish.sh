#!/usr/bin/env bash
# Benchmark: bytes a republish uploads after one package changed, against the size of the new catalog layer.
#   bash bench/publish.sh [CATALOG_DIR]   (default ../shared/data/catalogs/community-operators-prod-v4.20)
set -euo pipefail
cd "$(dirname "$0")/.."
"$(bash bench/tool.sh publishbench)" -catalog "${1:-../shared/data/catalogs/community-operators-prod-v4.20}"
