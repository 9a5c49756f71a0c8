#!/usr/bin/env bash
# Benchmark: what a run pays before its verb's own work, side by side in one run: `catalogbot version` (the
# release build), `opm version` (v1.73.0), and the floor: bench/startupfloor, a program that links
# operator-framework's bundle validators (catalogbot's policy-of-* rules) and nothing else, built as
# bench/catalogbot.sh builds catalogbot (static, trimmed, with its profile). Interleaved rounds of 20 runs
# of each command (hyperfine; the machine has slow and fast minutes), then per command the mean, median and
# minimum wall time over all rounds, user and system CPU; then, for catalogbot and the floor, their
# package initialisers: how many, the sum of each one's minimum clock over ten runs, and what they
# allocate (GODEBUG=inittrace=1).
#   bash bench/startup.sh [ROUNDS]
# CATALOGBOT_BENCH_BIN=PATH measures that catalogbot binary instead of one built from this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-10}"
command -v hyperfine >/dev/null || { echo "bench/startup.sh: needs hyperfine (Debian package hyperfine)" >&2; exit 1; }
opm="${CATALOGBOT_OPM:-$(bash hack/build-opm.sh)}"
bin="${CATALOGBOT_BENCH_BIN:-$(bash bench/catalogbot.sh)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
floor="$work/startupfloor"
CGO_ENABLED=0 go -C bench build -trimpath -pgo="$PWD/cmd/catalogbot/release.pgo" -o "$floor" ./startupfloor

echo "rounds: $rounds x 20 runs; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
names=(catalogbot floor opm)
cmds=("$bin version" "$floor" "$opm version")
for round in $(seq "$rounds"); do
	for i in 0 1 2; do
		hyperfine -N --warmup 3 --runs 20 --style none --export-json "$work/${names[i]}.$round.json" "${cmds[i]}" >/dev/null
	done
done
python3 - "$work" "${names[@]}" <<'PY'
import glob, json, statistics, sys
work, names = sys.argv[1], sys.argv[2:]
mean = {}
for n in names:
    runs = [json.load(open(f))["results"][0] for f in glob.glob(f"{work}/{n}.*.json")]
    t = [x for r in runs for x in r["times"]]
    user = statistics.mean(r["user"] for r in runs)
    system = statistics.mean(r["system"] for r in runs)
    mean[n] = statistics.mean(t)
    print(f"{n:10s} mean {mean[n]*1e3:5.1f} ms  median {statistics.median(t)*1e3:5.1f}  min {min(t)*1e3:5.1f}"
          f"  user {user*1e3:4.1f}  system {system*1e3:4.1f}  ({len(t)} runs)")
print(f"catalogbot: {mean['catalogbot']/mean['floor']:.2f}x the floor's mean, {mean['opm']/mean['catalogbot']:.2f}x faster than opm")
PY

inits() { # BIN [ARGS]: initialisers, sum of per-package minimum clock of 10 runs, bytes they allocate
	for _ in $(seq 10); do GODEBUG=inittrace=1 "$@" 2>&1 >/dev/null | grep '^init '; done |
		awk '{k=$2; if (!(k in m) || $5 < m[k]) m[k] = $5; a[k] = $8}
			END {for (k in m) {n++; t += m[k]; s += a[k]}; printf "%d initialisers, %.2f ms, %.2f MB\n", n, t, s / 1e6}'
}
echo "initialisers of catalogbot version: $(inits "$bin" version)"
echo "initialisers of the floor:          $(inits "$floor")"
