#!/usr/bin/env bash
# Builds every image the lane needs, daemonlessly (imagetool, go-containerregistry), as OCI layouts with
# tars under $KO_CACHE/images: the control-plane images kubeadm asks for, kube-proxy (on the Debian
# rootfs: it needs iptables), pause (gcc -static), OLM, the opm catalog base, the test operator and the
# test catalog (built by catalogbot's build package). Also writes $KO_CACHE/olm-manifests and
# $KO_CACHE/lane.json, which the e2e test reads.
source "$(dirname "$0")/lib.sh"
bin="$KO_CACHE/bin" k8s="$KO_CACHE/k8s-bin" img="$KO_CACHE/images"
mkdir -p "$img"
it="$bin/imagetool"
scratch() { local n=$1; shift; "$it" scratch -out "$img/$n" "$@" >"$img/$n.digest"; }

# kubeadm's own list: the names the node image must hold.
declare -A want
while read -r ref; do
  n=${ref##*/}; want[${n%%:*}]=$ref
done < <("$k8s/kubeadm" config images list --kubernetes-version "$KO_K8S_VERSION")
for c in kube-apiserver kube-controller-manager kube-scheduler; do
  scratch "$c" -ref "${want[$c]}" -dir /tmp "$k8s/$c:/usr/local/bin/$c:0755"
done
# etcd: kubeadm may name a newer 3.5 patch than the module proxy serves; the pinned build is tagged
# with the name kubeadm uses.
scratch etcd -ref "${want[etcd]}" -dir /tmp -dir /var/lib/etcd:0700 "$bin/etcd:/usr/local/bin/etcd:0755"
# coredns runs as root: kubeadm's deployment adds only NET_BIND_SERVICE, which a non-root user gets
# only through file capabilities (the upstream image's setcap), which a scratch layer here lacks.
scratch coredns -ref "${want[coredns]}" -entrypoint '["/coredns"]' "$bin/coredns:/coredns:0755"
pause_src=$(cd / && go mod download -json "k8s.io/kubernetes@$KO_K8S_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')/build/pause/linux/pause.c
gcc -Os -static -DVERSION="v$KO_PAUSE_VERSION-catalogbot" -o "$KO_CACHE/work/pause" "$pause_src"
strip "$KO_CACHE/work/pause"
scratch pause -ref "${want[pause]}" -entrypoint '["/pause"]' -user 65535:65535 "$KO_CACHE/work/pause:/pause:0755"
scratch kube-proxy -ref "${want[kube-proxy]}" -base-tar "$KO_CACHE/rootfs.tar" "$k8s/kube-proxy:/usr/local/bin/kube-proxy:0755"
printf '%s\n' "${want[@]}" >"$img/control-plane.list"

# OLM and opm, referenced by the OLM manifests. OLM's copy-content step runs cp: busybox's, static.
[ -x /bin/busybox ] || bash "$KO_REPO/hack/apt-install.sh" busybox-static >/dev/null
olm_image="catalogbot.local/olm:$KO_OLM_VERSION"
opm_image="catalogbot.local/opm:$KO_OPM_VERSION"
scratch olm -ref "$olm_image" -user 65532:65532 -dir /tmp \
  "$bin/olm:/bin/olm:0755" "$bin/catalog:/bin/catalog:0755" "$bin/copy-content:/bin/copy-content:0755" \
  "$bin/cpb:/bin/cpb:0755" "/bin/busybox:/bin/cp:0755"
scratch opm -ref "$opm_image" -user 1001 -dir /tmp -entrypoint '["/bin/opm"]' \
  "$bin/opm:/bin/opm:0755" "$bin/grpchealthprobe:/bin/grpc_health_probe:0755"
olmdir="$KO_CACHE/olm-manifests"
rm -rf "$olmdir"; mkdir -p "$olmdir"
olm_mod=$(cd / && go mod download -json "github.com/operator-framework/operator-lifecycle-manager@$KO_OLM_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
cp "$olm_mod"/deploy/chart/crds/*.yaml "$olmdir/"
chmod 0644 "$olmdir"/*.yaml
sed -e "s#__OLM_IMAGE__#$olm_image#g" -e "s#__OPM_IMAGE__#$opm_image#g" -e "s#__OLM_VERSION__#$KO_OLM_VERSION#g" \
  "$KO_REPO/hack/kind-offline/olm.yaml" >"$olmdir/9000_olm.yaml"

# The test operator, its bundle images, the test catalogs (base and head, in the olm.csv.metadata form
# and in opm render's default olm.bundle.object form) and their images, built with catalogbot's build
# package on the opm image.
op_image="catalogbot.local/smoke/test-operator:v1"
scratch test-operator -ref "$op_image" -user 65532:65532 -entrypoint '["/manager"]' "$bin/testoperator:/manager:0755"
rm -rf "$img/bundles"
"$it" testcatalog -out "$KO_CACHE/test-catalog" -images "$img/bundles" -operator-image "$op_image"
catalogs=""
for c in base head base-inline head-inline; do
  cat_image="catalogbot.local/smoke/catalog-$c:v1"
  "$it" catalog -fbc "$KO_CACHE/test-catalog/$c" -base-layout "$img/opm" -ref "$cat_image" -out "$img/catalog-$c" >"$img/catalog-$c.digest"
  catalogs+="${catalogs:+,}
    \"$c\": {\"image\": \"$cat_image\", \"digest\": \"$(cat "$img/catalog-$c.digest")\", \"archive\": \"$img/catalog-$c.tar\", \"fbc\": \"$KO_CACHE/test-catalog/$c\"}"
done

cat >"$KO_CACHE/lane.json" <<JSON
{
  "versionKey": "$KO_VERSION_KEY",
  "nodeImage": "$KO_NODE_IMAGE",
  "nodeImageArchive": "$KO_CACHE/node-image.tar",
  "olmManifests": "$olmdir",
  "opmLayout": "$img/opm",
  "opmBinary": "$bin/opm",
  "catalogs": {$catalogs
  },
  "bundles": "$KO_CACHE/test-catalog/bundles.json",
  "olmv1": "$KO_CACHE/olmv1/olmv1.json",
  "imageArchives": ["$img/olm.tar", "$img/opm.tar", "$img/test-operator.tar"]
}
JSON
ls -la "$img"/*.tar "$img"/bundles/*.tar >&2
