#!/usr/bin/env bash
# Shared settings for the offline kind lane: pinned versions, the cache layout and step timing.
# Sourced by the other scripts in this directory; never run on its own.
set -euo pipefail

KO_KIND_VERSION=v0.33.0
KO_K8S_VERSION=v1.33.13
KO_K8S_STAGING_VERSION=v0.33.13
KO_OLM_VERSION=v0.33.0
# The in-cluster opm is the reference opm the tests use (hack/build-opm.sh): one build serves both.
KO_OPM_VERSION=v1.73.0
KO_ETCD_VERSION=v3.5.21
KO_COREDNS_VERSION=v1.12.0
KO_PAUSE_VERSION=3.10
KO_DEBIAN_SUITE=bookworm

KO_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KO_VERSION_KEY="k8s-${KO_K8S_VERSION}_olm-${KO_OLM_VERSION}_opm-${KO_OPM_VERSION}_kind-${KO_KIND_VERSION}"
KO_CACHE="${KO_CACHE:-$(bash "$KO_REPO/hack/cache-dir.sh")/kind-offline/$KO_VERSION_KEY}"
KO_NODE_IMAGE="catalogbot.local/kind-node:${KO_K8S_VERSION}"
# The images kubeadm asks for; they are preloaded in the node image under these names.
KO_IMAGE_REPO=registry.k8s.io

export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}github.com/operator-framework/operator-lifecycle-manager"
# Builds of other modules (throwaway modules, module-cache directories) need -mod=mod and no workspace: a
# caller's GOWORK (hack/test.sh runs the lane in hack/go.work) would put them in workspace mode, where go
# refuses -mod=mod. Builds inside this repository use the workspace that holds the product and the tools
# modules and no -mod=mod (it would rewrite go.mod): see ko_repo_go. Every go command of the lane runs
# under one of these two settings, whatever the caller's environment (TestLaneIgnoresCallersWorkspace).
KO_GOWORK="$KO_REPO/hack/go.work"
export GOWORK=off GOFLAGS=-mod=mod
ko_repo_go() { (cd "$KO_REPO" && GOWORK="$KO_GOWORK" GOFLAGS= go "$@"); }

ko_now() { date +%s; }
KO_T0=${KO_T0:-$(ko_now)}
# ko_step NAME CMD...: runs CMD, prints its duration; the line format is what lane.sh's summary greps.
ko_step() {
  local name=$1; shift
  local t; t=$(ko_now)
  echo "==> [$(( t - KO_T0 ))s] $name: start" >&2
  if "$@"; then
    echo "==> [$(( $(ko_now) - KO_T0 ))s] $name: done in $(( $(ko_now) - t ))s" >&2
  else
    local rc=$?
    echo "==> [$(( $(ko_now) - KO_T0 ))s] $name: FAILED (exit $rc) after $(( $(ko_now) - t ))s" >&2
    return $rc
  fi
}
# ko_stamp NAME: true when step NAME completed for this version key.
ko_stamp() { [ -f "$KO_CACHE/stamps/$1" ]; }
ko_mark() { mkdir -p "$KO_CACHE/stamps"; date -u +%FT%TZ >"$KO_CACHE/stamps/$1"; }
# ko_cached NAME CMD...: runs CMD as step NAME unless its stamp exists, then stamps it.
ko_cached() {
  local name=$1; shift
  if ko_stamp "$name"; then echo "==> $name: cached ($KO_CACHE/stamps/$name)" >&2; return 0; fi
  ko_step "$name" "$@"
  ko_mark "$name"
}
