#!/usr/bin/env bash
# Compare the webhook burst of two builds in one run (bench/webhooks.sh's test, TestWebhookBurst): both
# test binaries are built first, then run alternately (base, head, base, head, ...) RUNS times each per
# queue, so a machine whose load changes weighs on both alike. Prints one line per run (with the load
# average when it started) and the median of each build's time to check run in_progress.
#   bash bench/webhooks-compare.sh BASE [HEAD]
# BASE and HEAD are commits (HEAD defaults to the work tree as it is). Needs CATALOGBOT_SHARED_DATA.
# RUNS (3), BACKENDS ("sqlite postgres"), N (500), PRS (100) and WORKERS (8) as in bench/webhooks.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
base="${1:?usage: bash bench/webhooks-compare.sh BASE [HEAD]}"
head="${2:-}"
: "${CATALOGBOT_SHARED_DATA:?set CATALOGBOT_SHARED_DATA (the burst reads GitHub payloads and its OpenAPI description)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# build NAME REV: a test binary of ./bot at REV (the work tree when REV is empty), in $tmp/NAME.test; the
# package's directory (the test reads its testdata) in $tmp/NAME.dir.
build() {
  local dir="$PWD"
  if [ -n "$2" ]; then
    dir="$tmp/$1"
    mkdir -p "$dir"
    git archive "$2" | tar -x -C "$dir"
  fi
  (cd "$dir" && go test -c -o "$tmp/$1.test" ./bot/)
  echo "$dir/bot" >"$tmp/$1.dir"
}
echo "building base ($base) and head (${head:-work tree})" >&2
build base "$base"
build head "$head"

# ms DURATION: Go's time.Duration text (1.5s, 664ms, 812.5µs) in milliseconds.
ms() { awk -v d="$1" 'BEGIN { if (d ~ /ms$/) print d + 0; else if (d ~ /µs$/) print d / 1000; else print d * 1000 }'; }

results="$tmp/results"
for backend in ${BACKENDS:-sqlite postgres}; do
  for run in $(seq "${RUNS:-3}"); do
    for build in base head; do
      load="$(cut -d' ' -f1 /proc/loadavg)"
      out="$tmp/out"
      rm -f "$out"
      if (cd "$(cat "$tmp/$build.dir")" && CATALOGBOT_BENCH_WEBHOOKS=1 CATALOGBOT_BENCH_N="${N:-500}" \
        CATALOGBOT_BENCH_PRS="${PRS:-100}" CATALOGBOT_BENCH_WORKERS="${WORKERS:-8}" CATALOGBOT_BENCH_OUT="$out" \
        CATALOGBOT_BENCH_QUEUE="$backend" CATALOGBOT_REQUIRE_POSTGRES=1 \
        "$tmp/$build.test" -test.count=1 -test.run '^TestWebhookBurst$' >"$tmp/log" 2>&1); then
        read -r p50 p99 < <(sed -n 's/^time to check run in_progress p50 \([^ ]*\) p99 \([^ ]*\)$/\1 \2/p' "$out")
        hook="$(sed -n 's/^webhook latency p50 [^ ]* p99 \([^ ]*\) .*/\1/p' "$out")"
        printf '%-8s run %d %-4s load %5s  in_progress p50 %6.0f ms p99 %6.0f ms  webhook p99 %6.0f ms\n' \
          "$backend" "$run" "$build" "$load" "$(ms "$p50")" "$(ms "$p99")" "$(ms "$hook")"
        echo "$backend $build $(ms "$p50") $(ms "$p99")" >>"$results"
      else
        # A lost or duplicated job, or a pull request left without a completed check: shown, not timed.
        printf '%-8s run %d %-4s load %5s  FAILED:\n' "$backend" "$run" "$build" "$load"
        grep -v '^=== \|^    --- PASS' "$tmp/log" | tail -20
      fi
    done
  done
done
echo "medians of the runs that passed (ms):"
for backend in ${BACKENDS:-sqlite postgres}; do
  for build in base head; do
    awk -v b="$backend" -v n="$build" '$1 == b && $2 == n { p50[++k] = $3; p99[k] = $4 }
      function median(a, k,   i, j, t) { for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2 }
      END { if (k) printf "%-8s %-4s in_progress p50 %6.0f p99 %6.0f (%d runs)\n", b, n, median(p50, k), median(p99, k), k }' "$results"
  done
done
