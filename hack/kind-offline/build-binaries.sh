#!/usr/bin/env bash
# Builds the static binaries of the lane's images besides Kubernetes: etcd, coredns, OLM (olm, catalog,
# copy-content, cpb), opm (for the in-cluster catalog base image), the grpc_health_probe stand-in, the test
# operator and imagetool. Output: $KO_CACHE/bin. CGO_ENABLED=0 everywhere (static binaries for scratch
# images). Modules whose go.mod replaces paths that a module download lacks are built from a throwaway
# module that requires them (their replace directives then do not apply).
source "$(dirname "$0")/lib.sh"
out="$KO_CACHE/bin"
mkdir -p "$out"
export CGO_ENABLED=0
moddir() { (cd / && go mod download -json "$1") | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'; }

build_in_module() { # MODULE@VERSION OUTNAME PKG [TAGS] [LDFLAGS]: build inside the module's own directory
  local dir; dir=$(moddir "$1")
  [ -d "$dir" ] || { echo "build-binaries: $1 not downloadable" >&2; return 1; }
  (cd "$dir" && go build -trimpath -tags "${4:-}" -ldflags "-s -w ${5:-}" -o "$out/$2" "$3")
}

build_via_require() { # MODULE VERSION OUTNAME PKG: build PKG from a throwaway module requiring MODULE
  local work="$KO_CACHE/work/mod-$3"
  rm -rf "$work"; mkdir -p "$work"
  printf 'module catalogbot.local/build%s\n\ngo 1.24\n\nrequire %s %s\n' "$3" "$1" "$2" >"$work/go.mod"
  (cd "$work" && go mod download >/dev/null 2>&1; go build -trimpath -ldflags "-s -w" -o "$out/$3" "$4")
}

[ -x "$out/etcd" ] || ko_step "etcd $KO_ETCD_VERSION" build_via_require go.etcd.io/etcd/server/v3 "$KO_ETCD_VERSION" etcd go.etcd.io/etcd/server/v3
# CoreDNS with only the plugins a kind cluster's Corefile names (coredns/main.go says why).
coredns_slim() {
  local work="$KO_CACHE/work/mod-coredns"
  rm -rf "$work"; mkdir -p "$work"
  printf 'module catalogbot.local/buildcoredns\n\ngo 1.24\n\nrequire github.com/coredns/coredns %s\n' "$KO_COREDNS_VERSION" >"$work/go.mod"
  cp "$KO_REPO/hack/kind-offline/coredns/main.go" "$work/"
  (cd "$work" && go mod download >/dev/null 2>&1; go build -trimpath -tags corednsslim -ldflags "-s -w" -o "$out/coredns" .)
}
# Keyed by what it is built from: a cache holding CoreDNS's full build (or another plugin list) rebuilds it.
coredns_key="$KO_COREDNS_VERSION $(sha256sum <"$KO_REPO/hack/kind-offline/coredns/main.go" | cut -c1-12)"
if [ ! -x "$out/coredns" ] || [ "$(cat "$out/coredns.key" 2>/dev/null)" != "$coredns_key" ]; then
  ko_step "coredns $KO_COREDNS_VERSION (kind's plugins)" coredns_slim
  echo "$coredns_key" >"$out/coredns.key"
fi
olm_ld="-X github.com/operator-framework/operator-lifecycle-manager/pkg/version.OLMVersion=${KO_OLM_VERSION#v}"
# olm, catalog, copy-content and cpb (what the bundle-unpack Job's init container copies out of OLM's image
# and runs in the bundle image) in one go build: one load of the module's packages, four links.
olm_all() {
  local dir; dir=$(moddir "github.com/operator-framework/operator-lifecycle-manager@$KO_OLM_VERSION")
  [ -d "$dir" ] || { echo "build-binaries: operator-lifecycle-manager@$KO_OLM_VERSION not downloadable" >&2; return 1; }
  (cd "$dir" && go build -trimpath -ldflags "-s -w $olm_ld" -o "$out/" ./cmd/olm ./cmd/catalog ./cmd/copy-content ./util/cpb)
}
[ -x "$out/olm" ] && [ -x "$out/catalog" ] && [ -x "$out/copy-content" ] && [ -x "$out/cpb" ] \
  || ko_step "OLM olm, catalog, copy-content, cpb $KO_OLM_VERSION" olm_all
# opm: the reference build the tests use (static, the same tags), shared through the tools cache.
[ -x "$out/opm" ] || ko_step "opm $KO_OPM_VERSION" install -m 0755 "$(bash "$KO_REPO/hack/build-opm.sh" "$KO_OPM_VERSION")" "$out/opm"
# Our own programs: always rebuilt (seconds), so the cache never holds stale fixtures.
ko_step "lane tools" ko_repo_go build -trimpath -tags tools -ldflags "-s -w" -o "$out/" ./hack/kind-offline/cmd/grpchealthprobe ./hack/kind-offline/cmd/imagetool
ko_step "test operator" ko_repo_go build -trimpath -tags tools -ldflags "-s -w -X main.Version=v1" -o "$out/testoperator" ./hack/kind-offline/cmd/testoperator
