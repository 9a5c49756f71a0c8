#!/usr/bin/env bash
# Assembles the kind node image from the Debian rootfs, kind's base files (from the kind module),
# the Kubernetes binaries and a static CNI config, then preloads the control-plane images the way
# `kind build node-image` does (containerd inside a build container, `ctr images import --no-unpack`,
# `docker commit`). `kind build node-image` itself pulls, so it cannot be used offline. Docker 20.10 cannot
# set STOPSIGNAL on import or commit; kind removes nodes with `docker rm -f`, so none is needed.
# Output: docker image $KO_NODE_IMAGE and its `docker save` archive $KO_CACHE/node-image.tar.
source "$(dirname "$0")/lib.sh"
k8s="$KO_CACHE/k8s-bin" img="$KO_CACHE/images"
root="$KO_CACHE/work/node-root"
rm -rf "$root"; mkdir -p "$root"
tar --numeric-owner -C "$root" -xf "$KO_CACHE/rootfs.tar"
kind_dir=$(cd / && go mod download -json "sigs.k8s.io/kind@$KO_KIND_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
files="$kind_dir/images/base/files"

# kind's base image files and the steps of its Dockerfile.
install -d -m 0755 "$root/kind" "$root/kind/bin" "$root/etc/kubernetes/manifests" "$root/kind/manifests"
install -m 0755 "$files"/usr/local/bin/* "$root/usr/local/bin/"
install -m 0755 "$files"/kind/bin/* "$root/kind/bin/"
install -m 0644 "$files/kind/README.txt" "$root/kind/"
install -m 0644 "$files/etc/crictl.yaml" "$root/etc/"
install -D -m 0644 "$files/etc/containerd/config.toml" "$root/etc/containerd/config.toml"
install -D -m 0644 "$files/etc/default/kubelet" "$root/etc/default/kubelet"
install -m 0644 "$files"/etc/sysctl.d/* "$root/etc/sysctl.d/"
install -m 0644 "$files"/etc/systemd/system/*.service "$files"/etc/systemd/system/*.slice "$root/etc/systemd/system/"
install -d -m 0755 "$root/etc/systemd/system/kubelet.service.d"
install -m 0644 "$files"/etc/systemd/system/kubelet.service.d/* "$root/etc/systemd/system/kubelet.service.d/"
find "$root/lib/systemd/system/sysinit.target.wants/" -name "systemd-tmpfiles-setup.service" -delete
rm -f "$root"/lib/systemd/system/multi-user.target.wants/* "$root"/etc/systemd/system/*.wants/* \
  "$root"/lib/systemd/system/local-fs.target.wants/* "$root"/lib/systemd/system/sockets.target.wants/*udev* \
  "$root"/lib/systemd/system/sockets.target.wants/*initctl* "$root"/lib/systemd/system/basic.target.wants/*
echo "ReadKMsg=no" >>"$root/etc/systemd/journald.conf"
ln -sf /usr/lib/systemd/systemd "$root/sbin/init"
install -d "$root/etc/systemd/system/multi-user.target.wants"
for u in kubelet containerd undo-mount-hacks; do
  ln -sf "/etc/systemd/system/$u.service" "$root/etc/systemd/system/multi-user.target.wants/$u.service"
done
ln -sf /dev/null "$root/etc/systemd/system/systemd-binfmt.service"

# Debian's containerd lives in /usr/bin; kind's unit starts /usr/local/bin/containerd.
for b in containerd ctr containerd-shim-runc-v2; do ln -sf "/usr/bin/$b" "$root/usr/local/bin/$b"; done
ctr oci spec | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
  | jq 'del(.process.rlimits)' >"$root/etc/containerd/cri-base.json"
# This VM's bounding set lacks CAP_SYS_RESOURCE: containerd must not try to lower oom_score_adj limits.
sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' "$root/etc/containerd/config.toml"
pause=$(grep '/pause:' "$img/control-plane.list")
sed -i "s#sandbox_image = .*#sandbox_image = \"$pause\"#" "$root/etc/containerd/config.toml"

# CNI: Debian's plugins, and a static one-node ptp network instead of kindnetd.
rm -rf "$root/opt/cni/bin"; install -d "$root/opt/cni"; ln -sf /usr/lib/cni "$root/opt/cni/bin"
install -d "$root/etc/cni/net.d"
cat >"$root/etc/cni/net.d/10-catalogbot-ptp.conflist" <<'CNI'
{
  "cniVersion": "0.4.0",
  "name": "kind-offline",
  "plugins": [
    {"type": "ptp", "ipMasq": true, "mtu": 1500,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
CNI
cat >"$root/kind/manifests/default-storage.yaml" <<'SC'
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
SC

for b in kubeadm kubelet kubectl; do install -m 0755 "$k8s/$b" "$root/usr/bin/$b"; done
echo "$KO_K8S_VERSION" >"$root/kind/version"

base="catalogbot.local/kind-node-base:$KO_K8S_VERSION"
tar --numeric-owner -C "$root" -c . | docker import \
  --change 'ENV container=docker' \
  --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' - "$base" >/dev/null
rm -rf "$root"

# Preload the control-plane images into the node's containerd.
cid=$(docker run -d --privileged --entrypoint sleep "$base" infinity)
trap 'docker rm -f -v "$cid" >/dev/null 2>&1 || true' EXIT
docker exec "$cid" bash -c 'nohup containerd >/var/log/containerd-build.log 2>&1 &'
for _ in $(seq 1 30); do docker exec "$cid" ctr version >/dev/null 2>&1 && break; sleep 1; done
for n in kube-apiserver kube-controller-manager kube-scheduler kube-proxy etcd coredns pause; do
  docker exec -i "$cid" ctr --namespace=k8s.io images import --label=io.cri-containerd.pinned=pinned \
    --all-platforms --no-unpack - <"$img/$n.tar" >&2
done
docker exec "$cid" ctr --namespace=k8s.io images ls -q >&2
docker exec "$cid" pkill containerd || true
sleep 2
docker commit --change 'ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]' "$cid" "$KO_NODE_IMAGE" >/dev/null
docker save -o "$KO_CACHE/node-image.tar.tmp" "$KO_NODE_IMAGE"
mv "$KO_CACHE/node-image.tar.tmp" "$KO_CACHE/node-image.tar"
docker rmi "$base" >/dev/null 2>&1 || true
