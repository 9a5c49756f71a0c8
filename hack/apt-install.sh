#!/usr/bin/env bash
# Installs Debian packages: bash hack/apt-install.sh PACKAGE...
# Safe while another install runs (the test command installs packages in the background while the kind
# lane installs its own): it waits for dpkg's locks (DPkg::Lock::Timeout) and retries `apt-get update`,
# whose lists lock that option does not cover. When the first attempt fails it finishes an install an
# earlier run left half done, refreshes the package lists and tries again.
set -uo pipefail
export DEBIAN_FRONTEND=noninteractive
apt() { apt-get -o DPkg::Lock::Timeout=900 -q "$@"; }
update() {
  for _ in $(seq 1 60); do
    apt update && return 0
    sleep 10
  done
  return 1
}
apt install -y "$@" && exit 0
dpkg --configure -a || true
apt -f install -y || true
update && apt install -y "$@"
