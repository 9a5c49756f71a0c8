#!/usr/bin/env bash
# Builds the Kubernetes binaries the node image needs (kubeadm, kubelet, kubectl, kube-apiserver,
# kube-controller-manager, kube-scheduler, kube-proxy) from the module proxy into $KO_CACHE/k8s-bin.
# k8s.io/kubernetes replaces its staging modules with ./staging paths that do not exist in a module
# download, so a throwaway module replaces each with its published v0.x release (or an empty stub when
# the proxy does not serve it and nothing imports it). ~33 min cold on 2 cores; seconds with a warm
# Go build cache.
source "$(dirname "$0")/lib.sh"
out="$KO_CACHE/k8s-bin"
mkdir -p "$out"
work="$KO_CACHE/work/k8s-mod"
rm -rf "$work"; mkdir -p "$work/stub"
cd "$work"
kdir=$(go mod download -json "k8s.io/kubernetes@$KO_K8S_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$kdir" ] || { echo "build-k8s: k8s.io/kubernetes@$KO_K8S_VERSION not downloadable" >&2; exit 1; }
served() {
  for _ in 1 2 3; do
    (cd / && go mod download "$1" >/dev/null 2>&1) && return 0
    sleep 5
  done
  return 1
}
# Checked from / because go.mod is being written in this directory.
{
  echo "module catalogbot.local/k8sbuild"
  echo "go 1.24.0"
  echo "require k8s.io/kubernetes $KO_K8S_VERSION"
  echo "replace ("
  for m in $(sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' "$kdir/go.mod"); do
    # three tries: a slow or busy proxy must not turn a served module into a stub (the build then fails
    # half an hour later on a package the stub lacks)
    if served "$m@$KO_K8S_STAGING_VERSION"; then
      echo "  $m => $m $KO_K8S_STAGING_VERSION"
    else
      mkdir -p "stub/${m#k8s.io/}"
      printf 'module %s\n\ngo 1.24\n' "$m" >"stub/${m#k8s.io/}/go.mod"
      echo "  $m => ./stub/${m#k8s.io/}"
      echo "build-k8s: $m@$KO_K8S_STAGING_VERSION not served; stubbed" >&2
    fi
  done
  echo ")"
} >go.mod.tmp
mv go.mod.tmp go.mod
# Keep the kubernetes module's own dependency versions (its go.mod is the tested set).
sed -n '/^require (/,/^)/p' "$kdir/go.mod" | grep -v '^\s*k8s.io/[a-z0-9-]* v0.0.0' >>go.mod
echo 'package main' >tools.go
go mod download >/dev/null 2>&1 || true
minor=${KO_K8S_VERSION#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KO_K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/component-base/version.buildDate=2025-01-01T00:00:00Z -X k8s.io/client-go/pkg/version.gitVersion=$KO_K8S_VERSION -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
pkgs=""
for c in kubeadm kubelet kubectl kube-apiserver kube-controller-manager kube-scheduler kube-proxy; do
  pkgs="$pkgs k8s.io/kubernetes/cmd/$c"
done
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/" $pkgs
"$out/kubeadm" version -o short
