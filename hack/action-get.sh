#!/usr/bin/env bash
# action.yml's first step: downloads the released catalogbot binary of the action's ref into
# $RUNNER_TEMP/catalogbot and verifies it against the release's SHA256SUMS. Writes found=true|false to
# $GITHUB_OUTPUT: false (build from source instead) when the ref is not a release tag or the release has no
# binary for this runner. A binary whose checksum does not match fails the step: never run it, never fall
# back silently.
# Env: ACTION_REF (github.action_ref), RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH, GITHUB_OUTPUT;
# CATALOGBOT_RELEASE_URL overrides the release download root (default
# $GITHUB_SERVER_URL/catalogbot/catalogbot/releases/download).
set -euo pipefail
found() { echo "found=$1" >>"$GITHUB_OUTPUT"; exit 0; }
ref="${ACTION_REF:-}"
case "$ref" in
v[0-9]*.[0-9]*.[0-9]*) ;;
*) echo "catalogbot: $ref is not a release tag: building from source"; found false ;;
esac
case "${RUNNER_OS:-Linux}" in Linux) os=linux ;; macOS) os=darwin ;; *) echo "catalogbot: no release binary for ${RUNNER_OS}: building from source"; found false ;; esac
case "${RUNNER_ARCH:-X64}" in X64) arch=amd64 ;; ARM64) arch=arm64 ;; *) echo "catalogbot: no release binary for ${RUNNER_ARCH}: building from source"; found false ;; esac
root="${CATALOGBOT_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/catalogbot/catalogbot/releases/download}/$ref"
file="catalogbot_${ref#v}_${os}_${arch}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
get() { curl -fsSL --retry 3 --max-time 120 -o "$tmp/$1" "$root/$1"; }
if ! get SHA256SUMS || ! get "$file"; then
  echo "catalogbot: no release binary $file at $root: building from source"
  found false
fi
want="$(awk -v f="$file" '$2 == f || $2 == "*" f { print $1 }' "$tmp/SHA256SUMS")"
if command -v sha256sum >/dev/null; then sum=(sha256sum); else sum=(shasum -a 256); fi
got="$("${sum[@]}" "$tmp/$file" | awk '{print $1}')"
if [ -z "$want" ] || [ "$want" != "$got" ]; then
  echo "::error title=catalogbot::the checksum of $file ($got) does not match the release's SHA256SUMS (${want:-no entry}): not running it" >&2
  exit 1
fi
install -m 0755 "$tmp/$file" "$RUNNER_TEMP/catalogbot"
echo "catalogbot: using the released $file (sha256 $got)"
found true
