#!/usr/bin/env bash
# Benchmark: a burst of N signed webhook deliveries (default 500, over 100 pull requests) on loopback
# against the bot's real HTTP handler, SQLite queue and workers, with the OpenAPI-validating fake GitHub
# and a local registry. Prints webhook latency p50/p99, time from a pull request's first delivery to its
# check run in progress (p50/p99), and executed jobs per second; fails on lost or duplicated jobs.
#   bash bench/webhooks.sh [N] [PULL_REQUESTS] [WORKERS]
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
CATALOGBOT_BENCH_WEBHOOKS=1 CATALOGBOT_BENCH_N="${1:-500}" CATALOGBOT_BENCH_PRS="${2:-100}" \
  CATALOGBOT_BENCH_WORKERS="${3:-8}" CATALOGBOT_BENCH_OUT="$out" \
  go test -count=1 -run '^TestWebhookBurst$' ./bot/ >/dev/null
cat "$out"
