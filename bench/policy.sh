#!/usr/bin/env bash
# Benchmark: the policy stage's CPU next to validation's, side by side in one run, on the shared catalogs
# (community-operators-prod-v4.16, whose bundles carry olm.bundle.object, and composed-279, in
# olm.csv.metadata form). For each catalog it measures the CPU time (user+system, mean of RUNS) of
#   validate                      catalogbot validate
#   policy (own rules)            + the community and olmv1 presets, operator-framework's validators off
#   policy (all), cold            + the community and olmv1 presets, the validators' cache emptied before
#                                 each run (a first run, or CI without a kept cache)
#   policy (all), warm            the same with the cache a previous run of the same catalog left
#                                 (policy.OFCache in $XDG_CACHE_HOME/catalogbot/render/policy-of)
# and prints each as a ratio to validate. XDG_CACHE_HOME is a temporary directory, so the user's cache is
# neither read nor written. CPU rather than wall time: the machines these run on are shared.
#   bash bench/policy.sh [RUNS] [DATA_DIR]
# CATALOGBOT_BENCH_BIN=PATH measures that catalogbot binary instead of one built from this tree.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
data="${2:-${CATALOGBOT_SHARED_DATA:-../shared/data}}"
if [ -n "${CATALOGBOT_BENCH_BIN:-}" ]; then
	bin="$CATALOGBOT_BENCH_BIN"
else
	bin="$(bash bench/catalogbot.sh)"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/cache"
cold="" # set: the cache is emptied before each run
cpu() { # prints the mean user+system seconds of RUNS runs of the command
	local total=0 t
	for _ in $(seq "$runs"); do
		if [ -n "$cold" ]; then rm -rf "$XDG_CACHE_HOME"; fi
		/usr/bin/time -o "$work/time" -f '%U %S' "$@" >/dev/null 2>&1 || true # a policy finding exits 1
		t=$(tail -1 "$work/time" | awk '{print $1+$2}') # after "Command exited with non-zero status"
		total=$(awk -v a="$total" -v b="$t" 'BEGIN{print a+b}')
	done
	awk -v t="$total" -v n="$runs" 'BEGIN{printf "%.3f", t/n}'
}
for name in community-operators-prod-v4.16 composed-279; do
	src="$data/catalogs/$name"
	own="$work/$name"
	cp -r "$src" "$own" && chmod -R u+w "$own"
	{
		printf 'apiVersion: catalogbot.dev/v1alpha1\nkind: Config\npolicy:\n  presets: [community, olmv1]\n  rules:\n'
		for r in bundle csv crd operatorhub capabilities categories deprecated-apis good-practices; do
			echo "    policy-of-$r: off"
		done
	} >"$own/.catalogbot.yaml"
	v=$(cpu "$bin" validate -o json "$src")
	o=$(cpu "$bin" validate -o json "$own")
	a=$(cold=1 cpu "$bin" validate --policy community,olmv1 -o json "$src")
	"$bin" validate --policy community,olmv1 -o json "$src" >/dev/null 2>&1 || true # fills the cache
	w=$(cpu "$bin" validate --policy community,olmv1 -o json "$src")
	awk -v n="$name" -v v="$v" -v o="$o" -v a="$a" -v w="$w" 'BEGIN{
		printf "%s: validate %.3f s CPU; with policy (own rules) %.3f s = %.2fx; with policy (all) cold %.3f s = %.2fx, warm %.3f s = %.2fx\n", n, v, o, o/v, a, a/v, w, w/v}'
done
