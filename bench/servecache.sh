#!/usr/bin/env bash
# Measurement for issue 16 ("the catalog image starts"): how long `opm serve` takes from start to a
# SERVING gRPC health answer on a catalog, without a serve cache (what a catalog image built by catalogbot
# does at pod start: its command is `serve /configs --cache-dir=/tmp/cache --cache-enforce-integrity=false`,
# so it builds /tmp/cache first) and with one pre-built by `opm serve --cache-only` (what
# opm's generated Dockerfile bakes into the image), side by side, REPEAT times each (median reported).
#   bash bench/servecache.sh [CATALOG_DIR] [REPEAT]
# Default catalog: the largest shared one (composed-279, 82 MB). OPM defaults to the reference opm;
# the kind lane's in-cluster opm is $KO_CACHE/bin/opm (v1.56.0): OPM=... to measure that one.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-../shared/data/catalogs/composed-279}"
repeat="${2:-3}"
opm="${OPM:-${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}}"
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
(cd hack && go build -tags tools -o "$work/probe" ./kind-offline/cmd/grpchealthprobe)  # the tools module at hack/
port=$((20000 + RANDOM % 20000))

serve_until_ready() { # extra opm serve args...; prints seconds from start to SERVING
	local s e
	s=$(date +%s.%N)
	"$opm" serve "$dir" -p "$port" "$@" >"$work/serve.log" 2>&1 & pid=$!
	until "$work/probe" -addr "127.0.0.1:$port" >/dev/null 2>&1; do
		kill -0 "$pid" 2>/dev/null || { echo "opm serve exited:" >&2; tail -5 "$work/serve.log" >&2; return 1; }
		sleep 0.1
	done
	e=$(date +%s.%N)
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
	echo "$s $e" | awk '{printf "%.2f", $2-$1}'
}
median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "$(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); $("$opm" version 2>/dev/null | grep -o 'OpmVersion:"[^"]*"'); catalog $dir ($(du -sh "$dir" | cut -f1))"
cold="" warm=""
for _ in $(seq "$repeat"); do
	rm -rf "$work/cold"
	cold+=" $(serve_until_ready --cache-dir "$work/cold" --cache-enforce-integrity=false)"
done
s=$(date +%s.%N)
"$opm" serve "$dir" --cache-dir "$work/warm" --cache-only >/dev/null 2>&1
build=$(echo "$s $(date +%s.%N)" | awk '{printf "%.2f", $2-$1}')
for _ in $(seq "$repeat"); do
	warm+=" $(serve_until_ready --cache-dir "$work/warm" --cache-enforce-integrity)"
done
c=$(echo "$cold" | median) w=$(echo "$warm" | median)
echo "no serve cache (built at start):   ${c}s   (runs:$cold)"
echo "pre-built serve cache:             ${w}s   (runs:$warm; building it with --cache-only took ${build}s, $(du -sh "$work/warm" | cut -f1))"
echo "ratio cold/pre-built: $(echo "$c $w" | awk '{printf "%.1f", $1/$2}')"
