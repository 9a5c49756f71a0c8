#!/usr/bin/env bash
# Benchmark: `catalogbot validate` against `opm validate` v1.73.0, side by side in one run, on the same
# catalog (default: ../shared/data/catalogs/composed-279, 82 MB, 5,374 bundles). Prints wall times, peak
# RSS and the ratios. Uses hyperfine when installed (Debian package hyperfine), else best-of-N timing.
#   bash bench/validate.sh [CATALOG_DIR] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
catalog="${1:-../shared/data/catalogs/composed-279}"
runs="${2:-10}"
opm="${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}"
bin="$(mktemp -d)/catalogbot"
go build -o "$bin" ./cmd/catalogbot
inc_pkg="$(ls "$catalog" | head -1)"

peak_rss() { # prints peak RSS in KB of the command
	/usr/bin/time -f '%M' "$@" 2>&1 >/dev/null | tail -1
}
best_wall() { # prints the best wall time in seconds over $runs runs
	local best=""
	for _ in $(seq "$runs"); do
		local s e
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1 || true
		e=$(date +%s.%N)
		best=$(echo "$s $e ${best:-999}" | awk '{d=$2-$1; if (d<$3) print d; else print $3}')
	done
	echo "$best"
}

echo "catalog: $catalog ($(du -sh "$catalog" | cut -f1)); runs: $runs; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
if command -v hyperfine >/dev/null; then
	hyperfine --warmup 1 --runs "$runs" -N --ignore-failure --export-json /tmp/catalogbot-bench.json \
		"$opm validate $catalog" "$bin validate $catalog"
	read -r opm_t cb_t < <(python3 -c 'import json;r=json.load(open("/tmp/catalogbot-bench.json"))["results"];print(r[0]["min"],r[1]["min"])')
else
	echo "(hyperfine not installed: best of $runs runs)"
	opm_t=$(best_wall "$opm" validate "$catalog")
	cb_t=$(best_wall "$bin" validate "$catalog")
fi
# incremental: one package changed, as the pre-commit hook runs it
work=$(mktemp -d)
cp -r "$catalog" "$work/catalog" && chmod -R u+w "$work/catalog"
git -C "$work" init -q && git -C "$work" add -A && git -C "$work" -c user.email=b@e -c user.name=bench commit -qm base
echo " " >> "$work/catalog/$inc_pkg/catalog.json"
inc_t=$(best_wall "$bin" validate "$work/catalog" --changed-since HEAD)
opm_rss=$(peak_rss "$opm" validate "$catalog")
cb_rss=$(peak_rss "$bin" validate "$catalog")
rm -rf "$work"
awk -v o="$opm_t" -v c="$cb_t" -v orss="$opm_rss" -v crss="$cb_rss" -v inc="$inc_t" 'BEGIN {
	printf "opm validate:        %.3f s  %6.1f MB peak RSS\n", o, orss/1024
	printf "catalogbot validate: %.3f s  %6.1f MB peak RSS\n", c, crss/1024
	printf "speed-up: %.1fx   memory: %.1f%% of opm (%.1fx less)\n", o/c, 100*crss/orss, orss/crss
	printf "incremental (one package changed, --changed-since, includes git): %.0f ms\n", inc*1000
}'
