#!/usr/bin/env bash
# Benchmark: peak memory and report size of `catalogbot validate` against `opm validate` v1.73.0 on hostile
# catalogs, side by side in one run (issue 14 item 4): a 45 MB one-line JSON file of 700,000 broken
# packages, and 40 MB of flow-style YAML documents (640,000). Prints peak RSS, output bytes and the ratios.
#   bash bench/hostile.sh [PACKAGES]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-700000}"
opm="${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "$(bash bench/catalogbot.sh)" "$work/catalogbot"
mkdir -p "$work/json" "$work/yaml"
awk -v n="$n" 'BEGIN { for (i = 0; i < n; i++) printf "{\"schema\":\"olm.package\",\"name\":\"pkg-%06d\",\"defaultChannel\":\"x\"}", i }' >"$work/json/catalog.json"
awk -v n="$((n * 64 / 70))" 'BEGIN { for (i = 0; i < n; i++) printf "---\n{schema: olm.package, name: pkg-%06d, defaultChannel: x}\n", i }' >"$work/yaml/catalog.yaml"

run() { # tool dir -> "peakKB outputBytes seconds"
	local out="$work/out" s e rss
	s=$(date +%s.%N)
	rss=$( { /usr/bin/time -f '%M' "$@" 2>&1 >"$out" || true; } | tail -1)
	e=$(date +%s.%N)
	echo "$rss $(stat -c %s "$out") $(echo "$s $e" | awk '{printf "%.1f", $2-$1}')"
}
echo "$(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in json yaml; do
	dir="$work/$kind"
	read -r c_rss c_out c_s < <(run "$work/catalogbot" validate "$dir")
	read -r o_rss o_out o_s < <(run "$opm" validate "$dir")
	echo "$kind ($(du -h "$dir"/catalog.* | cut -f1)):"
	echo "  catalogbot: peak RSS $((c_rss / 1024)) MB, stdout $c_out bytes, ${c_s}s"
	echo "  opm:        peak RSS $((o_rss / 1024)) MB, stdout $o_out bytes, ${o_s}s"
	awk -v c="$c_rss" -v o="$o_rss" 'BEGIN { printf "  peak RSS ratio catalogbot/opm: %.2f\n", c / o }'
done
