#!/usr/bin/env bash
# The offline kind lane: a real kind cluster with OLM (v0, and v1 next to it) on a machine with no container
# registry.
#
#   lane.sh              with a warm cache: make sure dockerd runs and the node image is loaded, then run
#                        `go test -tags e2e ./test/e2e/smoke` against it (minutes). With a cold cache: print
#                        "KIND OFFLINE LANE SKIPPED: CACHE COLD (...)" and exit 0 without testing anything.
#   lane.sh build-cache  build whatever the cache lacks (each step stamped, so an interrupted build
#                        continues where it stopped): about 50-60 min cold on 2 cores, plus about 8 min
#                        for the OLM v1 step (build-olmv1.sh).
#   lane.sh status       say which steps are cached.
# Every step prints its duration ("==> [Ns] STEP: done in Ns").
source "$(dirname "$0")/lib.sh"
here="$KO_REPO/hack/kind-offline"
# Stamps of fixture steps carry a hash of the scripts and programs they run, so editing them rebuilds.
# The OLM v1 step's files (olmv1_files) are hashed on their own: editing them rebuilds only that step.
olmv1_files=(./build-olmv1.sh ./boxcutter-stub ./cmd/registry ./cmd/imagetool/olmv1manifests.go ./cmd/imagetool/olmv1manifests_test.go
  ./cmd/imagetool/certs.go ./cmd/imagetool/testdata/olmv1-standard.yaml)
hash_files() { xargs -0 sha256sum | sha256sum | cut -c1-12; }
tree_hash() {
  local not=() f
  for f in "${olmv1_files[@]}"; do not+=(-not -path "$f" -not -path "$f/*"); done
  # Go tests build nothing the lane uses: editing one does not rebuild the cache.
  (cd "$here" && find . -type f \( -name '*.go' -o -name '*.sh' -o -name '*.yaml' \) -not -name '*_test.go' "${not[@]}" -print0 | sort -z | hash_files)
}
olmv1_hash() {
  (cd "$here" && { find "${olmv1_files[@]}" -type f -print0; printf '%s\0' ./lib.sh; } | sort -z | hash_files)
}
# The node image holds the control-plane images: their digests are part of its key.
node_hash() {
  cat "$here/build-node.sh" "$here/lib.sh" "$KO_CACHE"/images/{kube-apiserver,kube-controller-manager,kube-scheduler,kube-proxy,etcd,coredns,pause}.digest 2>/dev/null \
    | sha256sum | cut -c1-12
}
steps() {
  echo "rootfs k8s-bin binaries-$(tree_hash) images-$(tree_hash) node-$(node_hash) olmv1-$(olmv1_hash)"
}
missing() {
  local m=()
  for s in $(steps); do ko_stamp "$s" || m+=("$s"); done
  echo "${m[*]}"
}

build_cache() {
  mkdir -p "$KO_CACHE/logs"
  ko_step "docker" bash "$here/install-docker.sh"
  local h; h=$(tree_hash)
  # rootfs (network: Debian mirror) and the Kubernetes build (CPU) run side by side.
  ko_stamp rootfs || { ko_cached rootfs bash "$here/build-rootfs.sh" >"$KO_CACHE/logs/rootfs.log" 2>&1 & }
  local rootfs_pid=${!:-}
  ko_cached k8s-bin bash "$here/build-k8s.sh"
  ko_cached "binaries-$h" bash "$here/build-binaries.sh"
  if [ -n "$rootfs_pid" ]; then wait "$rootfs_pid" || { tail -20 "$KO_CACHE/logs/rootfs.log"; return 1; }; fi
  ko_stamp rootfs || { echo "lane: rootfs step failed" >&2; return 1; }
  ko_cached "images-$h" bash "$here/build-images.sh"
  ko_cached "node-$(node_hash)" bash "$here/build-node.sh"
  ko_cached "olmv1-$(olmv1_hash)" bash "$here/build-olmv1.sh"
  echo "==> cache complete: $KO_CACHE" >&2
}

run_lane() {
  local m; m=$(missing)
  if [ -n "$m" ]; then
    echo "KIND OFFLINE LANE SKIPPED: CACHE COLD (missing steps: $m; cache $KO_CACHE; build it with: bash hack/kind-offline/lane.sh build-cache)"
    return 0
  fi
  ko_step "docker" bash "$here/install-docker.sh"
  if ! docker image inspect "$KO_NODE_IMAGE" >/dev/null 2>&1; then
    ko_step "docker load node image" docker load -i "$KO_CACHE/node-image.tar"
  fi
  export CATALOGBOT_KIND_OFFLINE="$KO_CACHE/lane.json"
  ko_step "go test -tags e2e ./test/e2e/smoke" \
    ko_repo_go test -tags e2e -count=1 -v -timeout 30m ./test/e2e/smoke
}

case "${1:-run}" in
  run) run_lane ;;
  build-cache) build_cache ;;
  status)
    for s in $(steps); do
      if ko_stamp "$s"; then echo "cached   $s"; else echo "MISSING  $s"; fi
    done ;;
  *) echo "usage: lane.sh [run|build-cache|status]" >&2; exit 2 ;;
esac
