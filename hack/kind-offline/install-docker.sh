#!/usr/bin/env bash
# Installs Debian's docker.io and starts dockerd with the capability wrapper (runc-capfix.sh) as its
# default runtime when this machine's bounding set lacks CAP_SYS_RESOURCE. Idempotent; needs root.
# Starts dockerd directly when there is no systemd (containers, CI sandboxes).
source "$(dirname "$0")/lib.sh"
# The lane is offline: nothing in a kind network (docker's 172.16.0.0/12 bridges) may reach beyond them.
# Without this, a pod's traffic to an address kube-proxy has not (yet) translated, e.g. the service
# network before kube-proxy runs, would leave the machine through docker's NAT.
guard() {
  iptables -N DOCKER-USER 2>/dev/null || true
  iptables -C DOCKER-USER -s 172.16.0.0/12 ! -d 172.16.0.0/12 -j REJECT 2>/dev/null \
    || iptables -I DOCKER-USER -s 172.16.0.0/12 ! -d 172.16.0.0/12 -j REJECT
}
if docker info >/dev/null 2>&1; then
  guard
  echo "install-docker: dockerd already answers; egress from docker networks blocked" >&2
  exit 0
fi
if ! command -v dockerd >/dev/null || ! command -v jq >/dev/null; then
  bash "$KO_REPO/hack/apt-install.sh" docker.io jq >/dev/null
fi
# Bit 24 of CapBnd is CAP_SYS_RESOURCE.
bnd=$(awk '/^CapBnd/ {print $2}' /proc/self/status)
runtime_args=()
if (( (16#$bnd >> 24 & 1) == 0 )); then
  install -D -m 0755 "$KO_REPO/hack/kind-offline/runc-capfix.sh" /usr/local/libexec/catalogbot/runc-capfix
  runtime_args=(--add-runtime capfix=/usr/local/libexec/catalogbot/runc-capfix --default-runtime capfix)
  echo "install-docker: CAP_SYS_RESOURCE missing from the bounding set; using the runc wrapper" >&2
fi
mkdir -p /var/log/catalogbot
# A cgroup v1 host without systemd: cgroupfs driver.
nohup dockerd --exec-opt native.cgroupdriver=cgroupfs "${runtime_args[@]}" >/var/log/catalogbot/dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    guard
    echo "install-docker: dockerd up; egress from docker networks blocked (DOCKER-USER)" >&2
    exit 0
  fi
  sleep 1
done
echo "install-docker: dockerd did not answer within 60s; last log lines:" >&2
tail -20 /var/log/catalogbot/dockerd.log >&2
exit 1
