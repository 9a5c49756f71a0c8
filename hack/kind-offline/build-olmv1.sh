#!/usr/bin/env bash
# Builds OLM v1 (operator-controller, with catalogd inside it) for the lane: the two binaries, their images,
# the in-cluster registry's image and the install manifests (imagetool olmv1manifests: standard.yaml
# without cert-manager, with our own CA and serving-cert Secrets and a registries.conf that maps
# catalogbot.local to the in-cluster registry). Output: $KO_CACHE/olmv1/{bin,images,manifests}, named in
# $KO_CACHE/olmv1/olmv1.json (build-images.sh copies it into lane.json). Its stamp is keyed on this
# script, boxcutter-stub/ and the commands it runs, not on the whole directory, so editing the v0 scripts
# does not rebuild it and editing it does not rebuild v0.
source "$(dirname "$0")/lib.sh"
# Not part of KO_VERSION_KEY (lib.sh): this step has its own stamp (lane.sh olmv1_hash, over this
# script), so adding or bumping OLM v1 leaves the OLM v0 cache as it is.
KO_OLMV1_VERSION=v1.11.0
here="$KO_REPO/hack/kind-offline"
v1="$KO_CACHE/olmv1"
out="$v1/bin" img="$v1/images"
mkdir -p "$out" "$img" "$KO_CACHE/work"
export CGO_ENABLED=0
# The two upstream builds run outside this repository's workspace (lane.sh runs with GOWORK=hack/go.work).
oc_mod=github.com/operator-framework/operator-controller
oc_ld="-s -w -X $oc_mod/internal/shared/version.version=$KO_OLMV1_VERSION"
oc_dir=$(cd / && go mod download -json "$oc_mod@$KO_OLMV1_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -d "$oc_dir" ] || { echo "build-olmv1: $oc_mod@$KO_OLMV1_VERSION not downloadable" >&2; exit 1; }

# catalogd builds inside the module as it is.
build_catalogd() {
  (cd "$oc_dir" && GOWORK=off go build -trimpath -tags containers_image_openpgp -ldflags "$oc_ld" -o "$out/catalogd" ./cmd/catalogd)
}
# operator-controller requires pkg.package-operator.run/boxcutter, which the module proxy refuses: it is
# built from a throwaway module that replaces it with our stand-in (boxcutter-stub/, copied so the cache
# does not depend on this checkout's path).
build_operator_controller() {
  local work="$KO_CACHE/work/mod-operator-controller"
  rm -rf "$work"; mkdir -p "$work"
  cp -r "$here/boxcutter-stub" "$work/boxcutter-stub"
  cat >"$work/go.mod" <<MOD
module catalogbot.local/buildoperatorcontroller

go 1.26.3

require $oc_mod $KO_OLMV1_VERSION

replace pkg.package-operator.run/boxcutter => ./boxcutter-stub
MOD
  # operator-controller's go.sum: the checksum database does not know some of its pseudo-versions.
  install -m 0644 "$oc_dir/go.sum" "$work/go.sum"
  (cd "$work" && GOWORK=off go build -trimpath -tags containers_image_openpgp -ldflags "$oc_ld" -o "$out/operator-controller" "$oc_mod/cmd/operator-controller")
}
[ -x "$out/catalogd" ] || ko_step "catalogd $KO_OLMV1_VERSION" build_catalogd
# Rebuilt when the stand-in changes (its hash is kept next to the binary).
stub_hash=$(cd "$here/boxcutter-stub" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-12)
[ -x "$out/operator-controller" ] && [ "$(cat "$out/operator-controller.stub" 2>/dev/null)" = "$stub_hash" ] || ko_step "operator-controller $KO_OLMV1_VERSION (boxcutter stand-in)" build_operator_controller
echo "$stub_hash" >"$out/operator-controller.stub"
ko_step "lane registry and imagetool" ko_repo_go build -trimpath -tags tools -ldflags "-s -w" -o "$out/" \
  ./hack/kind-offline/cmd/registry ./hack/kind-offline/cmd/imagetool
it="$out/imagetool"
scratch() { local n=$1; shift; "$it" scratch -out "$img/$n" "$@" >"$img/$n.digest"; }

# As upstream's images: distroless/static, user 65532, one binary at /, WORKDIR / (the manifests run ./NAME).
catalogd_image="catalogbot.local/catalogd:$KO_OLMV1_VERSION"
oc_image="catalogbot.local/operator-controller:$KO_OLMV1_VERSION"
registry_image="catalogbot.local/registry:v1"
scratch catalogd -ref "$catalogd_image" -user 65532:65532 -dir /tmp -entrypoint '["/catalogd"]' "$out/catalogd:/catalogd:0755"
scratch operator-controller -ref "$oc_image" -user 65532:65532 -dir /tmp -entrypoint '["/operator-controller"]' \
  "$out/operator-controller:/operator-controller:0755"
scratch registry -ref "$registry_image" -user 65532:65532 -dir /tmp -entrypoint '["/registry"]' "$out/registry:/registry:0755"

"$it" olmv1manifests -standard "$oc_dir/manifests/standard.yaml" -out "$v1/manifests" -version "$KO_OLMV1_VERSION" \
  -catalogd-image "$catalogd_image" -operator-controller-image "$oc_image" -registry-image "$registry_image"

cat >"$v1/olmv1.json" <<JSON
{
  "version": "$KO_OLMV1_VERSION",
  "manifests": "$v1/manifests",
  "imageArchives": ["$img/catalogd.tar", "$img/operator-controller.tar", "$img/registry.tar"]
}
JSON
ls -la "$img"/*.tar "$v1/manifests" >&2
