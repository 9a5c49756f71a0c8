#!/usr/bin/env bash
# Benchmark: `catalogbot pr` on a catalog made into a git repository with a change (issue 37 item 4), with
# and without git on PATH, for each binary given, side by side in one run. The repository: the catalog
# (default ../shared/data/catalogs/composed-279, 82 MB) committed as catalog/ under a configuration naming
# one maintainer, then a commit appending a newline to the first package's file; measured as committed
# (loose objects) and packed by `git gc --aggressive` (as a clone is: deltas on deltas). Prints, per
# binary, layout and PATH, hyperfine's mean and min wall time and the peak private memory (RssAnon,
# bench/rssanon.sh: the least and the most of RUNS runs).
#   bash bench/pr.sh [CATALOG_DIR] [RUNS] [BINARY...]
# Without BINARY it measures this tree's release build (bench/catalogbot.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
catalog="$(realpath "${1:-../shared/data/catalogs/composed-279}")"
runs="${2:-5}"
shift $(($# < 2 ? $# : 2))
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$(bash bench/catalogbot.sh)")
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git_() { git -c user.name=bench -c user.email=bench@example.test -c init.defaultBranch=main "$@"; }
mkdir "$work/loose"
cp -r "$catalog" "$work/loose/catalog" && chmod -R u+w "$work/loose/catalog"
printf 'apiVersion: catalogbot.dev/v1alpha1\nkind: Config\nmaintainers: [catalog-admin]\n' >"$work/loose/.catalogbot.yaml"
(
	cd "$work/loose"
	git_ init -q && git_ add -A && git_ commit -qm base && git_ checkout -qb change
	for f in catalog/*/catalog.*; do
		echo >>"$f"
		break
	done
	git_ commit -qam change
)
cp -r "$work/loose" "$work/packed" && git -C "$work/packed" gc -q --aggressive
echo "$(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg); $(git --version); catalog $catalog"
printf '%-44s %-7s %-6s %18s %9s %18s\n' binary objects git "mean wall" "min" "RssAnon MB"
for layout in loose packed; do
	cmds=() names=()
	for bin in "${bins[@]}"; do
		for path in "$PATH" /nonexistent; do
			cmd="/usr/bin/env PATH=$path $bin pr --repo $work/$layout --base main --head change --skip-images --author catalog-admin"
			name="$(basename "$bin") $layout $([ "$path" = /nonexistent ] && echo no || echo yes)"
			rc=0
			$cmd >"$work/out" 2>&1 || rc=$?
			if [ "$rc" != 0 ]; then # a build that needs git fails without it: say so, time the others
				printf '%-44s %-7s %-6s %s\n' $name "exits $rc: $(grep -m1 -o "exec: [^:]*" "$work/out" || tail -1 "$work/out")"
				continue
			fi
			cmds+=("$cmd") names+=("$name")
		done
	done
	hyperfine -N -w 1 -r "$runs" --export-json "$work/h.json" "${cmds[@]}" >/dev/null 2>&1
	for i in "${!cmds[@]}"; do
		lo=0 hi=0
		for _ in $(seq "$runs"); do
			read -r -a cmd <<<"${cmds[$i]}"
			read -r a _ _ < <(bash bench/rssanon.sh "${cmd[@]}")
			[ "$lo" = 0 ] || [ "$a" -lt "$lo" ] && lo=$a
			[ "$a" -gt "$hi" ] && hi=$a
		done
		read -r mean sd min < <(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['results'][int(sys.argv[2])]; print(r['mean'], r['stddev'] or 0, r['min'])" "$work/h.json" "$i")
		printf '%-44s %-7s %-6s %10.2f ± %4.2f s %7.2f s %8d - %-8d\n' ${names[$i]} "$mean" "$sd" "$min" $((lo / 1024)) $((hi / 1024))
	done
done
