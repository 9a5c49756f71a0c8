#!/usr/bin/env bash
# Benchmark: `catalogbot validate` against `opm validate` v1.73.0, side by side in one run, on the same
# catalog (default: ../shared/data/catalogs/composed-279, 82 MB, 5,374 bundles). Prints wall times, peak
# private memory (RssAnon, sampled by bench/rssanon.sh: what each process allocated, not the executable's
# file-backed pages that peak RSS also counts) and the ratios. Uses hyperfine when installed (Debian
# package hyperfine), else best-of-N timing; either way the commands' runs are interleaved.
#   bash bench/validate.sh [CATALOG_DIR] [RUNS]
# CATALOGBOT_BENCH_BIN=PATH measures that catalogbot binary instead of one built from this tree;
# CATALOGBOT_BENCH_BASE=PATH (with hyperfine) also times that build's whole validation in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
catalog="${1:-../shared/data/catalogs/composed-279}"
runs="${2:-10}"
opm="${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}"
base="${CATALOGBOT_BENCH_BASE:-}" # with hyperfine, that build's whole validation is timed in the same run
if [ -n "${CATALOGBOT_BENCH_BIN:-}" ]; then
	bin="$CATALOGBOT_BENCH_BIN" # another build (say, an older commit's)
else
	bin="$(bash bench/catalogbot.sh)" # the one binary every verb runs from, built as a release is
fi
for d in "$catalog"/*/; do # the first package by name (a glob, not `ls | head`, whose SIGPIPE pipefail would stop the run)
	inc_pkg="$(basename "$d")"
	break
done

peak_anon() { # prints the peak RssAnon in KB of the command (the largest of 3 runs: it is sampled)
	local best=0 a
	for _ in 1 2 3; do
		a=$(bash bench/rssanon.sh "$@" | cut -d' ' -f1)
		[ "$a" -gt "$best" ] && best=$a
	done
	echo "$best"
}
best_wall_once() { # prints the wall time in seconds of one run
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || true
	e=$(date +%s.%N)
	echo "$s $e" | awk '{print $2-$1}'
}
best_walls() { # prints the best wall time in seconds of each command (a string) over $runs interleaved runs
	local -a best=()
	for _ in $(seq "$runs"); do
		local k=0 cmd s e
		for cmd in "$@"; do
			s=$(date +%s.%N)
			$cmd >/dev/null 2>&1 || true
			e=$(date +%s.%N)
			best[k]=$(echo "$s $e ${best[k]:-999}" | awk '{d=$2-$1; if (d<$3) print d; else print $3}')
			k=$((k + 1))
		done
	done
	echo "${best[@]}"
}

echo "catalog: $catalog ($(du -sh "$catalog" | cut -f1)); runs: $runs; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
# incremental: one package changed, as the pre-commit hook runs it, in a throw-away git repository
work=$(mktemp -d)
cp -r "$catalog" "$work/catalog" && chmod -R u+w "$work/catalog"
git -C "$work" init -q && git -C "$work" add -A && git -C "$work" -c user.email=b@e -c user.name=bench commit -qm base
# one of the package's own files changes (catalog.json or catalog.yaml; a blank line changes no blob)
for f in "$work/catalog/$inc_pkg"/*.json "$work/catalog/$inc_pkg"/*.yaml "$work/catalog/$inc_pkg"/*.yml; do
	[ -f "$f" ] && inc_file="$(basename "$f")" && break
done
echo "" >> "$work/catalog/$inc_pkg/$inc_file"
# The first run fills the select cache (.git/catalogbot); files written in the last 2 s are not remembered
# (git's racy-clean rule), so it runs once the copy is older than that. The change is staged after that
# wait too: git's index, written in the same second as the files it lists, marks every entry "racily
# clean", and every later `git diff` of the work tree (--staged's check for unstaged changes) then
# re-reads and hashes the whole catalog (45 ms for v4.20's 15 MB) until something rewrites the index. A
# maintainer's index is not a second younger than the catalog it lists.
sleep 3
git -C "$work" add -A # staged, as the pre-commit hook sees it
inc="$bin validate $work/catalog --changed-since HEAD"
staged="$bin validate --staged $work/catalog"
cold_t=$(best_wall_once $inc)
if command -v hyperfine >/dev/null; then
	# Interleaved rounds, one run of each command per round (after a warm-up round): the machine has slow and
	# fast minutes, and hyperfine's own order (every run of one command, then the next) let one tool's ten
	# runs fall in a fast minute and the other's in a slow one (v4.20's ratio read 12.5x and 16.7x in two
	# runs 5 minutes apart). Best of the rounds; CPU is the mean of user+sys over them.
	results="$(mktemp -d)" # per run: a fixed path is shared with whoever else runs the benchmark at the same time
	cmds=("$opm validate $catalog" "$bin validate $catalog" "$inc" "$staged" ${base:+"$base validate $catalog"})
	for round in $(seq 0 "$runs"); do
		hyperfine --runs 1 -N --ignore-failure --style none --export-json "$results/$round.json" "${cmds[@]}" >/dev/null
	done
	rm "$results/0.json" # the warm-up round
	summary() { # per command: "best-wall mean-cpu", in the order of cmds
		python3 -c 'import json,glob,sys
rounds=[json.load(open(f))["results"] for f in glob.glob(sys.argv[1]+"/*.json")]
for i in range(len(rounds[0])):
    xs=[r[i] for r in rounds]
    print(min(t for x in xs for t in x["times"]), sum(x["user"]+x["system"] for x in xs)/len(xs))' "$results"
	}
	read -r opm_t cb_t inc_t staged_t opm_cpu cb_cpu inc_cpu staged_cpu < <(summary | awk 'NR <= 4 {t = t $1 " "; c = c $2 " "} END {print t c}')
	[ -z "$base" ] || summary | sed -n 5p | awk -v b="${base%% *}" '{printf "base build (%s) validate: %.3f s (mean CPU, user+sys, %.3f s)\n", b, $1, $2}'
	rm -r "$results"
else
	echo "(hyperfine not installed: best of $runs runs, no CPU times)"
	# interleaved, so that a change in the machine's load falls on every command alike
	read -r opm_t cb_t inc_t staged_t < <(best_walls "$opm validate $catalog" "$bin validate $catalog" "$inc" "$staged")
	opm_cpu=0 cb_cpu=0 inc_cpu=0 staged_cpu=0
fi
opm_rss=$(peak_anon "$opm" validate "$catalog")
cb_rss=$(peak_anon "$bin" validate "$catalog")
rm -rf "$work"
awk -v o="$opm_t" -v c="$cb_t" -v orss="$opm_rss" -v crss="$cb_rss" -v inc="$inc_t" -v staged="$staged_t" -v scpu="$staged_cpu" -v cold="$cold_t" \
	-v ocpu="$opm_cpu" -v ccpu="$cb_cpu" -v icpu="$inc_cpu" 'BEGIN {
	printf "opm validate:        %.3f s  %6.1f MB peak RssAnon  (mean CPU, user+sys, %.3f s)\n", o, orss/1024, ocpu
	printf "catalogbot validate: %.3f s  %6.1f MB peak RssAnon  (mean CPU, user+sys, %.3f s)\n", c, crss/1024, ccpu
	printf "speed-up: %.1fx   private memory: %.1f%% of opm (%.1fx less)\n", o/c, 100*crss/orss, orss/crss
	printf "incremental (one package changed, --changed-since HEAD, includes git; opm has no incremental mode):\n"
	printf "  warm select cache: %.0f ms (mean CPU %.0f ms): %.0fx faster than opm validate of the whole catalog, %.0fx than full catalogbot validate (CPU: %.0fx, %.0fx)\n", \
		inc*1000, icpu*1000, o/inc, c/inc, (icpu > 0 ? ocpu/icpu : 0), (icpu > 0 ? ccpu/icpu : 0)
	printf "  cold (first run, fills the cache): %.0f ms\n", cold*1000
	printf "  --staged (the same change staged, as the pre-commit hook runs it): %.0f ms (mean CPU %.0f ms)\n", staged*1000, scpu*1000
	printf "CPU ratio (mean user+sys, opm / catalogbot; steadier than wall times on a loaded machine): %.1fx\n", (ccpu > 0 ? ocpu/ccpu : 0)
}'
