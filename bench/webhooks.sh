#!/usr/bin/env bash
# Benchmark: a burst of N signed webhook deliveries (default 500, over 100 pull requests) on loopback
# against the bot's real HTTP handler, queue and workers, with the OpenAPI-validating fake GitHub and a
# local registry, once with the SQLite queue and once with PostgreSQL (a throwaway server started by the
# test, or CATALOGBOT_POSTGRES_DSN). Prints, per backend, webhook latency p50/p99, time from a pull
# request's first delivery to its check run in progress (p50/p99), and executed jobs per second; fails on
# lost or duplicated jobs.
#   bash bench/webhooks.sh [N] [PULL_REQUESTS] [WORKERS]
# BACKENDS="sqlite" (or "postgres") runs one backend only.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(mktemp)"
log="$(mktemp)"
trap 'rm -f "$out" "$log"' EXIT
burst() {
  CATALOGBOT_BENCH_WEBHOOKS=1 CATALOGBOT_BENCH_N="${1:-500}" CATALOGBOT_BENCH_PRS="${2:-100}" \
    CATALOGBOT_BENCH_WORKERS="${3:-8}" CATALOGBOT_BENCH_OUT="$out" CATALOGBOT_BENCH_QUEUE="$backend" \
    CATALOGBOT_REQUIRE_POSTGRES=1 go test -count=1 -v -run '^TestWebhookBurst$' ./bot/ >"$log" 2>&1
}
for backend in ${BACKENDS:-sqlite postgres}; do
  echo "== queue: $backend"
  if ! burst "$@"; then
    # What failed is printed in full (a lost or duplicated job is a bug, whatever the load); one more run
    # tells a failure of this loaded machine from one that repeats.
    echo "BURST FAILED ON $backend (go test output below); running it once more"
    grep -v '^=== \|^    --- PASS' "$log" | tail -60
    burst "$@" || { tail -60 "$log"; echo "BURST FAILED TWICE ON $backend" >&2; exit 1; }
  fi
  cat "$out"
done
