#!/usr/bin/env bash
# Debootstraps the Debian rootfs every node-side image starts from: systemd, containerd, runc, CNI plugins
# and the tools kubeadm/kubelet/kube-proxy call (iptables, conntrack, ethtool, socat, kmod, mount...).
# Output: $KO_CACHE/rootfs.tar (about 7 min cold, network: Debian's mirror only).
source "$(dirname "$0")/lib.sh"
command -v debootstrap >/dev/null || bash "$KO_REPO/hack/apt-install.sh" debootstrap >/dev/null
mirror=${KO_DEBIAN_MIRROR:-$(sed -n 's#^URIs: \(http[^ ]*/debian\)$#\1#p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)}
mirror=${mirror:-http://deb.debian.org/debian}
root="$KO_CACHE/work/rootfs"
rm -rf "$root"; mkdir -p "$root"
pkgs=systemd,systemd-sysv,dbus,containerd,runc,containernetworking-plugins,iptables,nftables,conntrack,ethtool,socat,kmod,jq,iproute2,procps,mount,util-linux,ca-certificates,libseccomp2,pigz,ebtables,busybox-static
debootstrap --variant=minbase --include="$pkgs" "$KO_DEBIAN_SUITE" "$root" "$mirror" >"$KO_CACHE/logs/debootstrap.log" 2>&1 \
  || { tail -30 "$KO_CACHE/logs/debootstrap.log" >&2; exit 1; }
# Trim what a node never needs.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/* "$root"/usr/share/man/*
tar --numeric-owner -C "$root" -cf "$KO_CACHE/rootfs.tar.tmp" .
mv "$KO_CACHE/rootfs.tar.tmp" "$KO_CACHE/rootfs.tar"
rm -rf "$root"
