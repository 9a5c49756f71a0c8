#!/usr/bin/env bash
# Benchmark: `catalogbot check-images` on N images (default 500) in a local registry against a sequential
# `crane digest` loop over the same images, in one run; prints both times and the ratio.
#   bash bench/check-images.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(bash bench/catalogbot.sh)"
crane="$(bash hack/build-crane.sh)"
"$(bash bench/tool.sh imagesbench)" -n "${1:-500}" -catalogbot "$bin" -crane "$crane"
